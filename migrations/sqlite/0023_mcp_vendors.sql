-- Issue 27 (SPEC §10.2): MCP servers as vendors. A vendor's `kind` is `openapi` (its tools
-- are operations of a document, called over HTTP) or `mcp` (its tools come from an MCP
-- server's tools/list and its calls go to that server's tools/call). An MCP vendor's
-- server is remote (`mcp_url`, Streamable HTTP; `base_url` holds the same URL) or local
-- (`mcp_command`, a JSON array of the program and its arguments, started in `mcp_cwd`;
-- `base_url` is empty). `mcp_refreshed_at` (ms) is the last time its tools/list was read,
-- `mcp_error` what went wrong the last time it was read or started (NULL when it worked),
-- `mcp_oauth` the sealed OAuth credentials of a remote server that asked for them.
ALTER TABLE vendors ADD COLUMN kind TEXT NOT NULL DEFAULT 'openapi' CHECK (kind IN ('openapi', 'mcp'));
ALTER TABLE vendors ADD COLUMN mcp_url TEXT NULL;
ALTER TABLE vendors ADD COLUMN mcp_command TEXT NULL;
ALTER TABLE vendors ADD COLUMN mcp_cwd TEXT NULL;
ALTER TABLE vendors ADD COLUMN mcp_refreshed_at INTEGER NULL;
ALTER TABLE vendors ADD COLUMN mcp_error TEXT NULL;
ALTER TABLE vendors ADD COLUMN mcp_oauth TEXT NULL;

-- A connection of kind `env` is one environment variable of a local MCP server's process
-- (`header_or_param_name` the variable, the sealed secret its value). SQLite cannot alter
-- a CHECK constraint: connections is rebuilt with the same rows and ids (no table
-- references it by a foreign key).
CREATE TABLE connections_v23 (
    id INTEGER PRIMARY KEY,
    vendor_id INTEGER NOT NULL REFERENCES vendors(id),
    label TEXT NOT NULL,
    auth_kind TEXT NOT NULL CHECK (auth_kind IN ('none', 'bearer', 'header', 'query', 'basic', 'env')),
    header_or_param_name TEXT NULL,
    secret_ciphertext TEXT NULL,
    created_at INTEGER NOT NULL,
    revoked_at INTEGER NULL,
    suspended_at INTEGER NULL,
    suspended_reason TEXT NULL,
    UNIQUE (vendor_id, label)
);
INSERT INTO connections_v23 (id, vendor_id, label, auth_kind, header_or_param_name, secret_ciphertext,
                             created_at, revoked_at, suspended_at, suspended_reason)
    SELECT id, vendor_id, label, auth_kind, header_or_param_name, secret_ciphertext,
           created_at, revoked_at, suspended_at, suspended_reason FROM connections;
DROP TABLE connections;
ALTER TABLE connections_v23 RENAME TO connections;

-- The new history cause `upstream_removed` ("removed by its server"): an MCP vendor's
-- tool gone from its server's tools/list is retired and demoted with it. History is
-- rebuilt with the same rows and ids.
CREATE TABLE history_v23 (
    id INTEGER PRIMARY KEY,
    agent_id INTEGER NOT NULL REFERENCES agents(id),
    tool_id INTEGER NOT NULL REFERENCES tools(id),
    action TEXT NOT NULL CHECK (action IN ('promote', 'demote')),
    cause TEXT NOT NULL CHECK (cause IN ('agent', 'publish', 'console', 'rule', 'idle', 'cap', 'budget',
                                         'connection_revoked', 'retired', 'vendor_disabled',
                                         'vendor_removed', 'agent_removed', 'upstream_removed')),
    actor TEXT NOT NULL,
    at INTEGER NOT NULL
);
INSERT INTO history_v23 (id, agent_id, tool_id, action, cause, actor, at)
    SELECT id, agent_id, tool_id, action, cause, actor, at FROM history;
DROP TABLE history;
ALTER TABLE history_v23 RENAME TO history;
CREATE INDEX history_by_agent ON history(agent_id, at);
CREATE INDEX history_by_cause ON history(cause, at);
CREATE INDEX history_activity ON history(at, action, cause);
