-- Issue 26 (SPEC §10.1): Graft as its own OAuth authorization server for MCP clients.
-- A client registered itself (RFC 7591, `dynamic`) or is known by its client ID metadata
-- document (`metadata`: `client_id` is the document's URL, re-read after an hour). A
-- person's consent is a grant: that client acts as that agent for that resource. Codes
-- and tokens are stored as SHA-256 hashes only; a code lives 60 s and is used once (a
-- second use revokes what the first gave); a
-- refresh token is used once (a second use revokes its grant).
CREATE TABLE oauth_clients (
    id INTEGER PRIMARY KEY,
    client_id TEXT NOT NULL UNIQUE,
    name TEXT NOT NULL,
    redirect_uris TEXT NOT NULL,
    registered TEXT NOT NULL CHECK (registered IN ('dynamic', 'metadata')),
    registered_from TEXT NULL,
    created_at INTEGER NOT NULL,
    fetched_at INTEGER NULL,
    first_granted_at INTEGER NULL
);
CREATE INDEX oauth_clients_unused ON oauth_clients(first_granted_at, created_at);

CREATE TABLE oauth_grants (
    id INTEGER PRIMARY KEY,
    client_id INTEGER NOT NULL REFERENCES oauth_clients(id),
    agent_id INTEGER NOT NULL REFERENCES agents(id),
    resource TEXT NOT NULL,
    granted_by TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    last_used_at INTEGER NULL,
    revoked_at INTEGER NULL
);
CREATE INDEX oauth_grants_by_agent ON oauth_grants(agent_id, created_at);

CREATE TABLE oauth_codes (
    code_hash TEXT PRIMARY KEY,
    grant_id INTEGER NOT NULL REFERENCES oauth_grants(id),
    redirect_uri TEXT NOT NULL,
    code_challenge TEXT NOT NULL,
    expires_at INTEGER NOT NULL,
    used_at INTEGER NULL
);

CREATE TABLE oauth_tokens (
    id INTEGER PRIMARY KEY,
    token_hash TEXT NOT NULL UNIQUE,
    grant_id INTEGER NOT NULL REFERENCES oauth_grants(id),
    kind TEXT NOT NULL CHECK (kind IN ('access', 'refresh')),
    created_at INTEGER NOT NULL,
    expires_at INTEGER NOT NULL,
    used_at INTEGER NULL,
    revoked_at INTEGER NULL
);
CREATE INDEX oauth_tokens_by_grant ON oauth_tokens(grant_id);
CREATE INDEX oauth_tokens_by_expiry ON oauth_tokens(expires_at);
