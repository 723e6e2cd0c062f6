-- Issue 28.6: the reason a person gave for a denial (the agent's next call receives it),
-- and every decision a person made on an approval: which tool version, granted or
-- denied, by whom, when, and why (the Approvals page's history of each row). A row of
-- `approvals` holds only the latest decision; this log keeps the earlier ones.
ALTER TABLE approvals ADD COLUMN reason TEXT NULL;
CREATE TABLE approval_decisions (
    id INTEGER PRIMARY KEY,
    agent_id INTEGER NOT NULL REFERENCES agents(id),
    tool_id INTEGER NOT NULL REFERENCES tools(id),
    version INTEGER NULL,
    state TEXT NOT NULL CHECK (state IN ('granted', 'denied')),
    decided_by TEXT NOT NULL,
    reason TEXT NULL,
    decided_at INTEGER NOT NULL
);
CREATE INDEX approval_decisions_of_pair ON approval_decisions (agent_id, tool_id, id);
-- the decisions made before this log: the latest of each approval, as its row holds it
INSERT INTO approval_decisions (agent_id, tool_id, version, state, decided_by, decided_at)
    SELECT agent_id, tool_id, version, state, decided_by, decided_at FROM approvals
    WHERE state IN ('granted', 'denied') AND decided_by IS NOT NULL AND decided_at IS NOT NULL
    ORDER BY decided_at;
