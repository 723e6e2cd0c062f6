-- Security review, round three (issue 32.5, 32.7); see migrations/sqlite/0014.
ALTER TABLE vendors ADD COLUMN internal BOOLEAN NOT NULL DEFAULT FALSE;
ALTER TABLE connections ADD COLUMN suspended_at BIGINT NULL;
ALTER TABLE connections ADD COLUMN suspended_reason TEXT NULL;
