-- People who sign in to the console (SPEC §6). Passwords are argon2id PHC strings.
CREATE TABLE users (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    password_hash TEXT NOT NULL,
    created_at INTEGER NOT NULL
);

-- Console sessions (tower-sessions-sqlx-store's SQLite schema, created here so that the
-- migrations own every table).
CREATE TABLE IF NOT EXISTS tower_sessions (
    id TEXT PRIMARY KEY NOT NULL,
    data BLOB NOT NULL,
    expiry_date INTEGER NOT NULL
);
