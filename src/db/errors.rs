//! What a database error means to a caller: unavailable, a refused value, a duplicate.

/// Whether `e` says the database cannot be reached rather than that a statement failed:
/// I/O and TLS errors, a pool that timed out or closed, and PostgreSQL's connection
/// exceptions (SQLSTATE class 08), operator interventions (57P01–57P03: shutdown,
/// crash, "cannot connect now"), a lock not had within `lock_timeout` (55P03: another
/// instance holds the write lock too long) and a transaction PostgreSQL ended because it
/// sat idle (25P03: this process was frozen while it held the lock). sqlx drops broken connections and opens new
/// ones, so the next statement after the database is back succeeds.
pub fn is_unavailable(e: &sqlx::Error) -> bool {
    match e {
        sqlx::Error::Io(_)
        | sqlx::Error::Tls(_)
        | sqlx::Error::PoolTimedOut
        | sqlx::Error::PoolClosed
        | sqlx::Error::WorkerCrashed => true,
        sqlx::Error::Database(d) => d.code().is_some_and(|c| {
            c.starts_with("08") || c.starts_with("57P") || c == "55P03" || c == "25P03"
        }),
        _ => false,
    }
}

/// What is wrong with a value the database refused to store, when that is the input's
/// fault rather than Graft's: PostgreSQL refuses NUL characters in text (SQLSTATE
/// 22021, 22P05) and index entries over ~2.7 kB (54000); SQLite stores both.
pub fn refused_value(e: &sqlx::Error) -> Option<&'static str> {
    let sqlx::Error::Database(d) = e else {
        return None;
    };
    match d.code()?.as_ref() {
        "22021" | "22P05" => Some("text with a NUL character (\\u0000) cannot be stored"),
        "54000" => Some("a value is too long to be stored"),
        _ => None,
    }
}

/// Whether `e` is a unique-constraint violation.
pub fn is_unique_violation(e: &sqlx::Error) -> bool {
    matches!(e, sqlx::Error::Database(d) if d.is_unique_violation())
}

/// The database layer's error (sqlx's): the service maps it once, to `ServiceError`.
pub use sqlx::Error as DbError;
