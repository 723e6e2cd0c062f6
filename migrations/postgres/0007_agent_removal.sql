-- Issue 28.1: a person removes an agent. Its row stays (History keeps its changes under
-- it) with `removed_at` (ms) set, its name freed (renamed `<name>~<id>`, which no agent
-- name can be), its token replaced; its working set is demoted with the new cause
-- `agent_removed`.
ALTER TABLE agents ADD COLUMN removed_at BIGINT NULL;

ALTER TABLE history DROP CONSTRAINT history_cause_check;
ALTER TABLE history ADD CONSTRAINT history_cause_check
    CHECK (cause IN ('agent', 'publish', 'console', 'rule', 'idle', 'cap', 'connection_revoked',
                     'retired', 'vendor_disabled', 'vendor_removed', 'agent_removed'));
