-- Security review, round three (issue 32.5, 32.7).
-- `internal`: a person marked the vendor as living on the internal network, so its calls
-- may go to private and link-local addresses (never otherwise).
-- `suspended_at` / `suspended_reason`: the vendor's base URL moved to another origin
-- (scheme, host, port); its connections send nothing until a person confirms them there.
ALTER TABLE vendors ADD COLUMN internal BOOLEAN NOT NULL DEFAULT FALSE;
-- Issue 25.2: parameters a person says carry the connection's secret (comma-separated
-- names), for documents that declare their credential as an ordinary parameter (Slack's
-- `token`); NULL: only what the security schemes name.
ALTER TABLE vendors ADD COLUMN credential_params TEXT NULL;
ALTER TABLE connections ADD COLUMN suspended_at INTEGER NULL;
ALTER TABLE connections ADD COLUMN suspended_reason TEXT NULL;
