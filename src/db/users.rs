//! Queries of people who sign in to the console (`users`, SPEC §6).

use super::{DbResult, Pool};
use crate::{execute, on_db};
use sqlx::FromRow;

/// A `users` row (a person who signs in to the console).
#[derive(Debug, Clone, FromRow)]
pub struct UserRow {
    pub id: i64,
    /// Unique sign-in name.
    pub name: String,
    /// argon2 PHC string.
    pub password_hash: String,
    /// Sessions signed in at another epoch are void.
    pub session_epoch: i64,
}

/// Inserts a person; returns the id. Errors: the name is taken (unique).
pub async fn insert_user(
    pool: &Pool,
    name: &str,
    password_hash: &str,
    generated: bool,
    now: i64,
) -> DbResult<i64> {
    on_db!(pool, |e| {
        sqlx::query_scalar(
        "INSERT INTO users (name, password_hash, password_generated, created_at) VALUES ($1, $2, $3, $4) RETURNING id",
    )
    .bind(name)
    .bind(password_hash)
    .bind(generated as i64)
    .bind(now)
    .fetch_one(e).await
    })
}

/// The person with a name.
pub async fn select_user_by_name(pool: &Pool, name: &str) -> DbResult<Option<UserRow>> {
    on_db!(pool, |e| sqlx::query_as(
        "SELECT id, name, password_hash, session_epoch FROM users WHERE name = $1"
    )
    .bind(name)
    .fetch_optional(e)
    .await)
}

/// The person with an id.
pub async fn select_user(pool: &Pool, id: i64) -> DbResult<Option<UserRow>> {
    on_db!(pool, |e| sqlx::query_as(
        "SELECT id, name, password_hash, session_epoch FROM users WHERE id = $1"
    )
    .bind(id)
    .fetch_optional(e)
    .await)
}

/// Deletes a person; whether one was deleted.
pub async fn delete_user(pool: &Pool, name: &str) -> DbResult<bool> {
    let r = execute!(pool, "DELETE FROM users WHERE name = $1", name)?;
    Ok(r == 1)
}

/// Number of people.
pub async fn count_users(pool: &Pool) -> DbResult<i64> {
    on_db!(pool, |e| sqlx::query_scalar("SELECT COUNT(*) FROM users")
        .fetch_one(e)
        .await)
}

/// Whether a person still signs in with the password Graft generated at first start.
pub async fn select_password_generated(pool: &Pool, user_id: i64) -> DbResult<bool> {
    let v: Option<i64> = on_db!(pool, |e| sqlx::query_scalar(
        "SELECT password_generated FROM users WHERE id = $1"
    )
    .bind(user_id)
    .fetch_optional(e)
    .await)?;
    Ok(v == Some(1))
}

/// Replaces a person's password hash and moves to a new session epoch (their sessions end);
/// whether the person exists. The password is no longer the generated one.
pub async fn update_user_password(pool: &Pool, name: &str, password_hash: &str) -> DbResult<bool> {
    let r = execute!(pool, "UPDATE users SET password_hash = $1, session_epoch = session_epoch + 1, password_generated = 0 WHERE name = $2", password_hash, name)?;
    Ok(r == 1)
}
