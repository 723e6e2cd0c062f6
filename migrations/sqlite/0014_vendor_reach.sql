-- Security review, round three (issue 32.5, 32.7).
-- `internal`: a person marked the vendor as living on the internal network, so its calls
-- may go to private and link-local addresses (never otherwise).
-- `suspended_at` / `suspended_reason`: the vendor's base URL moved to another origin
-- (scheme, host, port); its connections send nothing until a person confirms them there.
ALTER TABLE vendors ADD COLUMN internal BOOLEAN NOT NULL DEFAULT FALSE;
ALTER TABLE connections ADD COLUMN suspended_at INTEGER NULL;
ALTER TABLE connections ADD COLUMN suspended_reason TEXT NULL;
