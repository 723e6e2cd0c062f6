-- Issue 28: see migrations/sqlite/0029.
ALTER TABLE webhook_settings ADD COLUMN url_ciphertext TEXT NOT NULL DEFAULT '';
