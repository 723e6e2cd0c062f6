//! Who did what (issue 28.8): the actions a person takes that the audit log records, by
//! a fixed name each (`resource.verb`), with the words the console and the CSV use.
//! Pure: the service records them ([`crate::service::Graft::audit`]).

use serde::{Deserialize, Serialize};

/// One kind of action a person took. The stored text is `resource.verb`
/// (`approval.deny`); filters take it as written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum AuditAction {
    /// A person signed in to the console.
    SignIn,
    /// A person changed their own password.
    PasswordChange,
    /// A console account was added.
    UserAdd,
    /// A console account was removed.
    UserRemove,
    /// An agent was added (its token shown once).
    AgentAdd,
    /// An agent's name, harness, cap, idle window or budget changed.
    AgentEdit,
    /// An agent's token was replaced.
    AgentRotateToken,
    /// An agent was disabled (its token refused).
    AgentDisable,
    /// An agent was enabled again.
    AgentEnable,
    /// An agent was removed.
    AgentRemove,
    /// A person connected an OAuth client to an agent (the consent page).
    AgentConnectClient,
    /// A person revoked an OAuth client's access to an agent.
    AgentRevokeClient,
    /// An OpenAPI document was imported (a new vendor or a re-upload).
    VendorImport,
    /// An MCP server was added as a vendor, or its tools read again.
    VendorMcp,
    /// A vendor's settings changed (base URL, enabled, credentials).
    VendorEdit,
    /// A vendor was removed.
    VendorRemove,
    /// A connection (credential) was added.
    ConnectionAdd,
    /// A connection's secret was replaced in place.
    ConnectionReplace,
    /// A connection became a vendor's or a tool's default.
    ConnectionDefault,
    /// A connection was revoked.
    ConnectionRevoke,
    /// An agent was allowed to run a write tool.
    ApprovalGrant,
    /// An agent was refused a write tool.
    ApprovalDeny,
    /// A person published a tool version (description, schema, hints).
    ToolPublish,
    /// A person promoted a tool into an agent's working set.
    ToolPromote,
    /// A person sent a tool's request from its page ("Try it", issue 28.10), or was
    /// refused sending it (the detail says why).
    ToolTry,
    /// A person demoted a tool from an agent's working set.
    ToolDemote,
    /// A person added a note to a tool.
    ToolNote,
    /// A person ran a sweep (not a preview), planned now or as of another time.
    SweepRun,
    /// A starter template was created, edited, applied or deleted.
    Template,
    /// An installation setting changed (the webhook).
    SettingChange,
}

super::str_enum!(AuditAction {
    SignIn => "session.sign_in",
    PasswordChange => "user.password",
    UserAdd => "user.add",
    UserRemove => "user.remove",
    AgentAdd => "agent.add",
    AgentEdit => "agent.edit",
    AgentRotateToken => "agent.rotate_token",
    AgentDisable => "agent.disable",
    AgentEnable => "agent.enable",
    AgentRemove => "agent.remove",
    AgentConnectClient => "agent.connect_client",
    AgentRevokeClient => "agent.revoke_client",
    VendorImport => "vendor.import",
    VendorMcp => "vendor.mcp",
    VendorEdit => "vendor.edit",
    VendorRemove => "vendor.remove",
    ConnectionAdd => "connection.add",
    ConnectionReplace => "connection.replace_secret",
    ConnectionDefault => "connection.default",
    ConnectionRevoke => "connection.revoke",
    ApprovalGrant => "approval.grant",
    ApprovalDeny => "approval.deny",
    ToolPublish => "tool.publish",
    ToolPromote => "tool.promote",
    ToolDemote => "tool.demote",
    ToolTry => "tool.try",
    ToolNote => "tool.note",
    SweepRun => "sweep.run",
    Template => "template.change",
    SettingChange => "setting.change",
});

impl AuditAction {
    /// Every action, in the order the console's filter lists them.
    pub const ALL: [AuditAction; 30] = [
        Self::SignIn,
        Self::PasswordChange,
        Self::UserAdd,
        Self::UserRemove,
        Self::AgentAdd,
        Self::AgentEdit,
        Self::AgentRotateToken,
        Self::AgentDisable,
        Self::AgentEnable,
        Self::AgentRemove,
        Self::AgentConnectClient,
        Self::AgentRevokeClient,
        Self::VendorImport,
        Self::VendorMcp,
        Self::VendorEdit,
        Self::VendorRemove,
        Self::ConnectionAdd,
        Self::ConnectionReplace,
        Self::ConnectionDefault,
        Self::ConnectionRevoke,
        Self::ApprovalGrant,
        Self::ApprovalDeny,
        Self::ToolPublish,
        Self::ToolPromote,
        Self::ToolDemote,
        Self::ToolTry,
        Self::ToolNote,
        Self::SweepRun,
        Self::Template,
        Self::SettingChange,
    ];

    /// What the action did, in a few words ("revoked a connection").
    pub fn in_words(self) -> &'static str {
        match self {
            Self::SignIn => "signed in",
            Self::PasswordChange => "changed their password",
            Self::UserAdd => "added a person",
            Self::UserRemove => "removed a person",
            Self::AgentAdd => "added an agent",
            Self::AgentEdit => "edited an agent",
            Self::AgentRotateToken => "replaced an agent's token",
            Self::AgentDisable => "disabled an agent",
            Self::AgentEnable => "enabled an agent",
            Self::AgentRemove => "removed an agent",
            Self::AgentConnectClient => "connected a client to an agent",
            Self::AgentRevokeClient => "revoked a client of an agent",
            Self::VendorImport => "imported a document",
            Self::VendorMcp => "added or refreshed an MCP server",
            Self::VendorEdit => "edited a vendor",
            Self::VendorRemove => "removed a vendor",
            Self::ConnectionAdd => "added a connection",
            Self::ConnectionReplace => "replaced a connection's secret",
            Self::ConnectionDefault => "chose a default connection",
            Self::ConnectionRevoke => "revoked a connection",
            Self::ApprovalGrant => "approved",
            Self::ApprovalDeny => "denied",
            Self::ToolPublish => "published a tool version",
            Self::ToolPromote => "promoted a tool",
            Self::ToolDemote => "demoted a tool",
            Self::ToolTry => "sent a tool's request from its page, or was refused sending it",
            Self::ToolNote => "added a note to a tool",
            Self::SweepRun => "ran a sweep",
            Self::Template => "changed a starter template",
            Self::SettingChange => "changed a setting",
        }
    }
}

/// The longest `detail` kept with an event, in characters (longer text is cut with "…").
pub const DETAIL_MAX_CHARS: usize = 300;

/// An event's detail as kept: one line, at most [`DETAIL_MAX_CHARS`] characters.
pub fn clean_detail(detail: &str) -> String {
    let line = detail.split_whitespace().collect::<Vec<_>>().join(" ");
    if line.chars().count() <= DETAIL_MAX_CHARS {
        return line;
    }
    let mut cut: String = line.chars().take(DETAIL_MAX_CHARS - 1).collect();
    cut.push('…');
    cut
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_action_reads_back_from_its_stored_name() {
        for a in AuditAction::ALL {
            assert_eq!(AuditAction::parse(a.as_str()), Some(a));
        }
        let mut names: Vec<_> = AuditAction::ALL.iter().map(|a| a.as_str()).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), AuditAction::ALL.len(), "names are unique");
        assert_eq!(AuditAction::parse("approval.maybe"), None);
    }

    #[test]
    fn a_detail_is_one_line_and_bounded() {
        assert_eq!(clean_detail(" a\nb\t c "), "a b c");
        let long = clean_detail(&"x".repeat(400));
        assert_eq!(long.chars().count(), DETAIL_MAX_CHARS);
        assert!(long.ends_with('…'));
    }
}
