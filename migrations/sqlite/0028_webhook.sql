-- Issue 28.3: the installation's outgoing webhook. One row at most (id 1): where notices
-- go, the signing secret (sealed with Graft's key, as connection secrets are), the body
-- format (`graft` or `slack`), how many failed calls of one vendor within 5 minutes make
-- a notice, and who set it when.
CREATE TABLE webhook_settings (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    url TEXT NOT NULL,
    secret_ciphertext TEXT NOT NULL,
    format TEXT NOT NULL,
    error_threshold INTEGER NOT NULL,
    changed_at INTEGER NOT NULL,
    changed_by TEXT NOT NULL
);
