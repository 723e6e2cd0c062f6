-- Issue 31: starter sets (SPEC §1 "promoted by": rule). A template is a named list of
-- tools a person defines once ("support", "ops"); an agent may use one
-- (agents.starter_template_id) and has its own starter tools besides. The agent's
-- starter set is the union of both; the rule promotes each of its tools that is not in
-- the working set when the agent is created, when the set or its template changes, or
-- when a person applies it again. The sweep treats starter tools like any other.
CREATE TABLE starter_templates (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    created_at INTEGER NOT NULL
);

CREATE TABLE starter_template_tools (
    template_id INTEGER NOT NULL REFERENCES starter_templates(id),
    tool_id INTEGER NOT NULL REFERENCES tools(id),
    added_at INTEGER NOT NULL,
    PRIMARY KEY (template_id, tool_id)
);

CREATE TABLE agent_starter_tools (
    agent_id INTEGER NOT NULL REFERENCES agents(id),
    tool_id INTEGER NOT NULL REFERENCES tools(id),
    added_at INTEGER NOT NULL,
    PRIMARY KEY (agent_id, tool_id)
);

ALTER TABLE agents ADD COLUMN starter_template_id INTEGER NULL REFERENCES starter_templates(id);
