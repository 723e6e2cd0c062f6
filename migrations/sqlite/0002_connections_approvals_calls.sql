-- SPEC §2: vendor credentials (encrypted), approvals of write tools, and the call log.
-- Times are milliseconds since the Unix epoch (UTC).

CREATE TABLE connections (
    id INTEGER PRIMARY KEY,
    vendor_id INTEGER NOT NULL REFERENCES vendors(id),
    label TEXT NOT NULL,
    auth_kind TEXT NOT NULL CHECK (auth_kind IN ('none', 'bearer', 'header', 'query', 'basic')),
    header_or_param_name TEXT NULL,
    secret_ciphertext TEXT NULL,
    created_at INTEGER NOT NULL,
    revoked_at INTEGER NULL,
    UNIQUE (vendor_id, label)
);

CREATE TABLE approvals (
    agent_id INTEGER NOT NULL REFERENCES agents(id),
    tool_id INTEGER NOT NULL REFERENCES tools(id),
    state TEXT NOT NULL CHECK (state IN ('pending', 'granted', 'denied')),
    requested_at INTEGER NOT NULL,
    decided_at INTEGER NULL,
    decided_by TEXT NULL,
    PRIMARY KEY (agent_id, tool_id)
);

CREATE TABLE tool_calls (
    id INTEGER PRIMARY KEY,
    agent_id INTEGER NOT NULL REFERENCES agents(id),
    tool_id INTEGER NOT NULL REFERENCES tools(id),
    version INTEGER NOT NULL,
    dry_run BOOLEAN NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('ok', 'error')),
    http_status INTEGER NULL,
    duration_ms INTEGER NOT NULL,
    at INTEGER NOT NULL,
    error_code TEXT NULL
);
CREATE INDEX tool_calls_by_agent ON tool_calls(agent_id, at);
