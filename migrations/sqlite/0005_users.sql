-- People who sign in to the console (SPEC §6). Passwords are argon2id PHC strings.
CREATE TABLE users (
    -- AUTOINCREMENT: a removed person's id is never reused, so their old sessions stay void
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    name TEXT NOT NULL UNIQUE,
    password_hash TEXT NOT NULL,
    -- a session holds the epoch it was signed in at; a password change bumps it, which
    -- ends the person's other sessions
    session_epoch INTEGER NOT NULL DEFAULT 0,
    created_at INTEGER NOT NULL
);

-- Console sessions (tower-sessions-sqlx-store's SQLite schema, created here so that the
-- migrations own every table).
CREATE TABLE IF NOT EXISTS tower_sessions (
    id TEXT PRIMARY KEY NOT NULL,
    data BLOB NOT NULL,
    expiry_date INTEGER NOT NULL
);
