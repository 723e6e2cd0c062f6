-- Issue 14.3: a vendor's lifecycle. A re-imported document updates the vendor's tools:
-- an operation gone from it retires its tool (`retired_at`, ms; kept for history, out of
-- search, not callable or promotable; an operation that comes back restores it). A
-- vendor can be disabled (`disabled_at`: its tools are out of search and refuse calls)
-- and removed (`removed_at`: also hidden from the console's lists, its document dropped
-- and its connections revoked; its tools stay for history). Every import is recorded in
-- `imports` with its summary (JSON), shown on the Vendors page.
ALTER TABLE tools ADD COLUMN retired_at INTEGER NULL;
ALTER TABLE vendors ADD COLUMN disabled_at INTEGER NULL;
ALTER TABLE vendors ADD COLUMN removed_at INTEGER NULL;

CREATE TABLE imports (
    id INTEGER PRIMARY KEY,
    vendor_id INTEGER NOT NULL REFERENCES vendors(id),
    actor TEXT NOT NULL,
    at INTEGER NOT NULL,
    summary TEXT NOT NULL
);
CREATE INDEX imports_by_vendor ON imports(vendor_id, at);

-- History gains the causes of these demotions. SQLite cannot alter a CHECK constraint:
-- the table is rebuilt with the same rows and ids.
CREATE TABLE history_v11 (
    id INTEGER PRIMARY KEY,
    agent_id INTEGER NOT NULL REFERENCES agents(id),
    tool_id INTEGER NOT NULL REFERENCES tools(id),
    action TEXT NOT NULL CHECK (action IN ('promote', 'demote')),
    cause TEXT NOT NULL CHECK (cause IN ('agent', 'publish', 'console', 'rule', 'idle', 'cap', 'connection_revoked',
                                         'retired', 'vendor_disabled', 'vendor_removed')),
    actor TEXT NOT NULL,
    at INTEGER NOT NULL
);
INSERT INTO history_v11 (id, agent_id, tool_id, action, cause, actor, at)
    SELECT id, agent_id, tool_id, action, cause, actor, at FROM history;
DROP TABLE history;
ALTER TABLE history_v11 RENAME TO history;
CREATE INDEX history_by_agent ON history(agent_id, at);
CREATE INDEX history_by_cause ON history(cause, at);
