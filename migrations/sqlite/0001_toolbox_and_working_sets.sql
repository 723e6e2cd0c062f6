-- SPEC §2: vendors, tools and their versions, agents, working sets, usage, history.
-- Portable SQL: the same statements run on PostgreSQL with BIGINT identity ids.
-- Times are milliseconds since the Unix epoch (UTC), so they order and compare as numbers.

CREATE TABLE vendors (
    id INTEGER PRIMARY KEY,
    slug TEXT NOT NULL UNIQUE,
    display_name TEXT NOT NULL,
    base_url TEXT NOT NULL,
    openapi_document TEXT NULL,
    created_at INTEGER NOT NULL
);

CREATE TABLE tools (
    id INTEGER PRIMARY KEY,
    vendor_id INTEGER NOT NULL REFERENCES vendors(id),
    name TEXT NOT NULL,
    operation_id TEXT NULL,
    default_connection_id INTEGER NULL,
    created_at INTEGER NOT NULL,
    UNIQUE (vendor_id, name)
);
CREATE INDEX tools_by_operation ON tools(vendor_id, operation_id);

CREATE TABLE tool_versions (
    id INTEGER PRIMARY KEY,
    tool_id INTEGER NOT NULL REFERENCES tools(id),
    version INTEGER NOT NULL CHECK (version >= 1),
    title TEXT NULL,
    description TEXT NOT NULL,
    input_schema TEXT NOT NULL,
    output_schema TEXT NULL,
    method TEXT NOT NULL,
    path_template TEXT NOT NULL,
    binding TEXT NOT NULL,
    read_only_hint BOOLEAN NOT NULL,
    destructive_hint BOOLEAN NOT NULL,
    idempotent_hint BOOLEAN NOT NULL,
    open_world_hint BOOLEAN NOT NULL,
    authored_by TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    UNIQUE (tool_id, version)
);

CREATE TABLE agents (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    harness TEXT NULL,
    token_hash TEXT NOT NULL UNIQUE,
    cap INTEGER NOT NULL CHECK (cap BETWEEN 1 AND 500),
    idle_window_days INTEGER NOT NULL CHECK (idle_window_days BETWEEN 1 AND 3650),
    created_at INTEGER NOT NULL,
    last_seen_at INTEGER NULL
);

CREATE TABLE working_set (
    agent_id INTEGER NOT NULL REFERENCES agents(id),
    tool_id INTEGER NOT NULL REFERENCES tools(id),
    promoted_at INTEGER NOT NULL,
    promoted_by TEXT NOT NULL CHECK (promoted_by IN ('agent', 'publish', 'console', 'rule')),
    PRIMARY KEY (agent_id, tool_id)
);

CREATE TABLE tool_usage (
    agent_id INTEGER NOT NULL REFERENCES agents(id),
    tool_id INTEGER NOT NULL REFERENCES tools(id),
    last_used_at INTEGER NOT NULL,
    calls INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (agent_id, tool_id)
);

CREATE TABLE history (
    id INTEGER PRIMARY KEY,
    agent_id INTEGER NOT NULL REFERENCES agents(id),
    tool_id INTEGER NOT NULL REFERENCES tools(id),
    action TEXT NOT NULL CHECK (action IN ('promote', 'demote')),
    cause TEXT NOT NULL CHECK (cause IN ('agent', 'publish', 'console', 'rule', 'idle', 'cap', 'connection_revoked')),
    actor TEXT NOT NULL,
    at INTEGER NOT NULL
);
CREATE INDEX history_by_agent ON history(agent_id, at);
