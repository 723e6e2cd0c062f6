-- Console sign-in sessions (SPEC §6) in Graft's own schema, in the shape of
-- tower-sessions-sqlx-store's PostgresStore (its `migrate` would create a schema of its
-- own, which needs CREATE on the database at every start). SQLite's is migration 0005.
CREATE TABLE IF NOT EXISTS tower_sessions (
    id TEXT PRIMARY KEY NOT NULL,
    data BYTEA NOT NULL,
    expiry_date TIMESTAMPTZ NOT NULL
);
