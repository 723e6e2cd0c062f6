-- Issue 28.2: see migrations/sqlite/0024.
ALTER TABLE vendors ADD COLUMN default_connection_id BIGINT NULL;
ALTER TABLE connections ADD COLUMN last_used_at BIGINT NULL;
ALTER TABLE connections ADD COLUMN secret_replaced_at BIGINT NULL;
