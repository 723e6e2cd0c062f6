//! The only module that speaks SQL (sqlx): one file per resource of SPEC §2, small named
//! query functions with `$1` placeholders, SQL that runs on SQLite and PostgreSQL alike
//! (SPEC §9). Times are `i64` milliseconds since the Unix epoch (UTC).
//!
//! Multi-row changes take a `&mut Conn` so the service runs them inside one transaction
//! (SPEC §2: a promotion writes `working_set` and `history` together or not at all).

pub mod agents;
pub mod approvals;
pub mod audit;
pub mod calls;
pub mod changes;
pub mod connections;
pub mod copy;
pub mod errors;
pub mod evidence;
pub mod oauth;
pub mod pool;
pub mod search;
pub mod sessions;
pub mod starters;
pub mod sweep;
pub mod tools;
pub mod users;
pub mod vendors;
pub mod webhook;
pub mod working_set;

pub use agents::*;
pub use approvals::*;
pub use audit::*;
pub use calls::*;
pub use changes::*;
pub use connections::*;
pub use errors::*;
pub use evidence::*;
pub use oauth::*;
pub use pool::*;
pub use search::*;
pub use sessions::SessionDb;
pub use starters::*;
pub use tools::*;
pub use users::*;
pub use vendors::*;
pub use webhook::*;
pub use working_set::*;
