-- Issue 29: what a tool costs a model's context, in tokens.
-- `tokens`: the o200k_base token count of the version's served MCP definition (the JSON
-- a client receives in tools/list); `tokens_basis` names what it was counted on (the
-- tokenizer and the schema budget), so that a changed budget counts again. NULL until
-- counted.
ALTER TABLE tool_versions ADD COLUMN tokens INTEGER NULL;
ALTER TABLE tool_versions ADD COLUMN tokens_basis TEXT NULL;
-- An agent's token budget: the sweep trims its working set to it as to the cap.
ALTER TABLE agents ADD COLUMN token_budget INTEGER NULL
    CHECK (token_budget IS NULL OR token_budget BETWEEN 1000 AND 500000);

-- The new history cause `budget` ("over the token budget"). SQLite cannot alter a CHECK
-- constraint: history is rebuilt with the same rows and ids.
CREATE TABLE history_v19 (
    id INTEGER PRIMARY KEY,
    agent_id INTEGER NOT NULL REFERENCES agents(id),
    tool_id INTEGER NOT NULL REFERENCES tools(id),
    action TEXT NOT NULL CHECK (action IN ('promote', 'demote')),
    cause TEXT NOT NULL CHECK (cause IN ('agent', 'publish', 'console', 'rule', 'idle', 'cap', 'budget',
                                         'connection_revoked', 'retired', 'vendor_disabled',
                                         'vendor_removed', 'agent_removed')),
    actor TEXT NOT NULL,
    at INTEGER NOT NULL
);
INSERT INTO history_v19 (id, agent_id, tool_id, action, cause, actor, at)
    SELECT id, agent_id, tool_id, action, cause, actor, at FROM history;
DROP TABLE history;
ALTER TABLE history_v19 RENAME TO history;
CREATE INDEX history_by_agent ON history(agent_id, at);
CREATE INDEX history_by_cause ON history(cause, at);
