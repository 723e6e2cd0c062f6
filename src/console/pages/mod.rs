//! The console's pages (SPEC §6), one route each. Data comes from the server functions in
//! [`super::server_fns`]; every form is an `ActionForm` (or a plain GET/multipart form), so it
//! works as a plain POST without JavaScript and without page loads when hydrated.

mod account;
mod activity;
mod agent;
mod agents;
mod approvals;
mod audit;
mod calls;
mod home;
mod settings;
mod starters;
mod tables;
mod tool_edit;
mod toolbox;
mod vendor;
mod vendors;

pub use account::*;
pub use activity::*;
pub use agent::*;
pub use agents::*;
pub use approvals::*;
pub use audit::*;
pub use calls::*;
pub use home::*;
pub use settings::*;
pub use starters::{StartersPage, TemplatePage};
pub use toolbox::*;
pub use vendor::*;
pub use vendors::*;
