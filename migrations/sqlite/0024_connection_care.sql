-- Issue 28.2: a vendor's default connection (its tools without a default of their own use
-- it; SPEC §10.5), when a connection was last used by a call (ms), and when its secret
-- was last replaced in place (ms; a rotation without a second connection).
ALTER TABLE vendors ADD COLUMN default_connection_id INTEGER NULL;
ALTER TABLE connections ADD COLUMN last_used_at INTEGER NULL;
ALTER TABLE connections ADD COLUMN secret_replaced_at INTEGER NULL;
