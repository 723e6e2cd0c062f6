-- Security review, round three (issue 32.5, 32.7); see migrations/sqlite/0014.
ALTER TABLE vendors ADD COLUMN internal BOOLEAN NOT NULL DEFAULT FALSE;
-- Issue 25.2: parameters a person says carry the connection's secret (comma-separated
-- names), for documents that declare their credential as an ordinary parameter (Slack's
-- `token`); NULL: only what the security schemes name.
ALTER TABLE vendors ADD COLUMN credential_params TEXT NULL;
ALTER TABLE connections ADD COLUMN suspended_at BIGINT NULL;
ALTER TABLE connections ADD COLUMN suspended_reason TEXT NULL;
