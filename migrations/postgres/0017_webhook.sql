-- Issue 28.3: see migrations/sqlite/0028.
CREATE TABLE webhook_settings (
    id BIGINT PRIMARY KEY CHECK (id = 1),
    url TEXT NOT NULL,
    secret_ciphertext TEXT NOT NULL,
    format TEXT NOT NULL,
    error_threshold BIGINT NOT NULL,
    changed_at BIGINT NOT NULL,
    changed_by TEXT NOT NULL
);
