-- Issue 29: what a tool costs a model's context, in tokens.
-- `tokens`: the o200k_base token count of the version's served MCP definition (the JSON
-- a client receives in tools/list); `tokens_basis` names what it was counted on (the
-- tokenizer and the schema budget), so that a changed budget counts again. NULL until
-- counted.
ALTER TABLE tool_versions ADD COLUMN tokens BIGINT NULL;
ALTER TABLE tool_versions ADD COLUMN tokens_basis TEXT NULL;
-- An agent's token budget: the sweep trims its working set to it as to the cap.
ALTER TABLE agents ADD COLUMN token_budget BIGINT NULL
    CHECK (token_budget IS NULL OR token_budget BETWEEN 1000 AND 500000);

-- The new history cause `budget` ("over the token budget").
ALTER TABLE history DROP CONSTRAINT history_cause_check;
ALTER TABLE history ADD CONSTRAINT history_cause_check
    CHECK (cause IN ('agent', 'publish', 'console', 'rule', 'idle', 'cap', 'budget',
                     'connection_revoked', 'retired', 'vendor_disabled', 'vendor_removed',
                     'agent_removed'));
