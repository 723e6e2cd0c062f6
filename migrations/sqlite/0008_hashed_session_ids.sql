-- Console sessions are now stored under a SHA-256 of their id (server/console.rs
-- HashedStore): rows stored under the plain id can no longer be loaded, and a copy of
-- them would sign its reader in. People sign in again once.
DELETE FROM tower_sessions;
