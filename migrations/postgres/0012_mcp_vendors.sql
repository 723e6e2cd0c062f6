-- Issue 27 (SPEC §10.2): MCP servers as vendors; see migrations/sqlite/0023.
ALTER TABLE vendors ADD COLUMN kind TEXT NOT NULL DEFAULT 'openapi' CHECK (kind IN ('openapi', 'mcp'));
ALTER TABLE vendors ADD COLUMN mcp_url TEXT NULL;
ALTER TABLE vendors ADD COLUMN mcp_command TEXT NULL;
ALTER TABLE vendors ADD COLUMN mcp_cwd TEXT NULL;
ALTER TABLE vendors ADD COLUMN mcp_refreshed_at BIGINT NULL;
ALTER TABLE vendors ADD COLUMN mcp_error TEXT NULL;
ALTER TABLE vendors ADD COLUMN mcp_oauth TEXT NULL;

ALTER TABLE connections DROP CONSTRAINT connections_auth_kind_check;
ALTER TABLE connections ADD CONSTRAINT connections_auth_kind_check
    CHECK (auth_kind IN ('none', 'bearer', 'header', 'query', 'basic', 'env'));

ALTER TABLE history DROP CONSTRAINT history_cause_check;
ALTER TABLE history ADD CONSTRAINT history_cause_check
    CHECK (cause IN ('agent', 'publish', 'console', 'rule', 'idle', 'cap', 'budget',
                     'connection_revoked', 'retired', 'vendor_disabled',
                     'vendor_removed', 'agent_removed', 'upstream_removed'));
