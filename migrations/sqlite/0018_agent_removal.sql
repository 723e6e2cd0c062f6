-- Issue 28.1: a person removes an agent. Its row stays (History keeps its changes under
-- it) with `removed_at` (ms) set, its name freed (renamed `<name>~<id>`, which no agent
-- name can be), its token replaced; its working set is demoted with the new cause
-- `agent_removed`.
ALTER TABLE agents ADD COLUMN removed_at INTEGER NULL;

-- SQLite cannot alter a CHECK constraint: history is rebuilt with the same rows and ids.
CREATE TABLE history_v18 (
    id INTEGER PRIMARY KEY,
    agent_id INTEGER NOT NULL REFERENCES agents(id),
    tool_id INTEGER NOT NULL REFERENCES tools(id),
    action TEXT NOT NULL CHECK (action IN ('promote', 'demote')),
    cause TEXT NOT NULL CHECK (cause IN ('agent', 'publish', 'console', 'rule', 'idle', 'cap', 'connection_revoked',
                                         'retired', 'vendor_disabled', 'vendor_removed', 'agent_removed')),
    actor TEXT NOT NULL,
    at INTEGER NOT NULL
);
INSERT INTO history_v18 (id, agent_id, tool_id, action, cause, actor, at)
    SELECT id, agent_id, tool_id, action, cause, actor, at FROM history;
DROP TABLE history;
ALTER TABLE history_v18 RENAME TO history;
CREATE INDEX history_by_agent ON history(agent_id, at);
CREATE INDEX history_by_cause ON history(cause, at);
