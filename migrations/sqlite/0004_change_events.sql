-- Working-set changes made by one Graft process (the CLI, another server) reach the
-- MCP channels held by another: each change batch is recorded here with its origin,
-- and every server polls for changes from other origins (SPEC §3.5, §9).
CREATE TABLE change_events (
    id INTEGER PRIMARY KEY,
    agent_id INTEGER NOT NULL,
    origin TEXT NOT NULL,
    at INTEGER NOT NULL
);
