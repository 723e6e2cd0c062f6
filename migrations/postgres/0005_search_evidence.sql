-- Issue 24.3: find_tool learns from what agents pick. An agent's last find_tool (its task
-- words only, never the payload: ids, numbers, quoted text; and the ids of the tools it
-- answered) is kept for ten minutes; a promote or a call of a tool that follows it is
-- evidence that the words mean the tool. One row per tool, agent and phrase: an agent
-- counts once per tool and query; `at` is its newest pick (evidence decays by it).
CREATE TABLE recent_searches (
    agent_id BIGINT NOT NULL PRIMARY KEY REFERENCES agents(id),
    phrase TEXT NOT NULL,
    hits TEXT NOT NULL,
    at BIGINT NOT NULL
);

CREATE TABLE search_evidence (
    tool_id BIGINT NOT NULL REFERENCES tools(id),
    agent_id BIGINT NOT NULL REFERENCES agents(id),
    phrase TEXT NOT NULL,
    at BIGINT NOT NULL,
    PRIMARY KEY (tool_id, agent_id, phrase)
);
