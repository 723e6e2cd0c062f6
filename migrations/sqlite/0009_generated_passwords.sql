-- Issue 14.1: the console asks a person to change the password Graft generated at first
-- start until they do. 1 while `password_hash` is that generated password; any change of
-- password sets it back to 0. A database made before this migration has no record of
-- which password was generated: its people start at 0 (no banner).
ALTER TABLE users ADD COLUMN password_generated INTEGER NOT NULL DEFAULT 0;
