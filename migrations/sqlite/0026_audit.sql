-- Issue 28.8: who did what. One row per action a person took (in the console, or on the
-- command line as the OS user or `--as NAME`): what (`action`, a fixed word such as
-- `approval.deny`), on what (`target`, names as the console shows them) and a short
-- `detail` in words. Never a secret: tokens, passwords and keys are not recorded.
CREATE TABLE audit_events (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    at INTEGER NOT NULL,
    person TEXT NOT NULL,
    action TEXT NOT NULL,
    target TEXT NOT NULL,
    detail TEXT NULL
);
CREATE INDEX audit_events_by_time ON audit_events (at, id);
