//! A local MCP server's process (issue 27.4): started without a shell, in its own process
//! group, with only the environment Graft gives it, and never outliving Graft.

use process_wrap::tokio::{CommandWrap, KillOnDrop, ProcessGroup};
use rmcp::transport::TokioChildProcess;
use std::process::Stdio;
use tokio::process::ChildStderr;

/// Variables of Graft's own environment a local server inherits: what programs need to
/// find themselves and their files (`PATH`, `HOME`, the user and the locale, the time
/// zone, the temporary directory). Nothing else of Graft's environment (its secret key,
/// its database URL) reaches a stranger's process; a server's own variables come from
/// its connections of kind `env`.
pub const INHERITED: &[&str] = &[
    "PATH", "HOME", "USER", "LOGNAME", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "TMPDIR",
];

/// Starts `argv` in `cwd` (Graft's own directory when `None`) with [`INHERITED`] and
/// `env`: its stdin and stdout are the MCP stdio transport (MCP 2025-11-25 "stdio"), its
/// stderr piped for Graft's log. The process leads a new process group, so that
/// stopping it stops what it started (`npx` and the server it runs); it is killed when
/// its handle is dropped; and on Linux it is killed when Graft dies, even by SIGKILL
/// (`PR_SET_PDEATHSIG`). Returns the transport, its stderr and its process id.
/// Errors: the program cannot be started (not found, not executable, a bad directory).
pub fn spawn(
    argv: &[String],
    cwd: Option<&str>,
    env: &[(String, String)],
) -> std::io::Result<(TokioChildProcess, Option<ChildStderr>, Option<u32>)> {
    let (program, args) = argv
        .split_first()
        .ok_or_else(|| std::io::Error::other("no program to start"))?;
    let mut command = CommandWrap::with_new(program, |c| {
        c.args(args).env_clear();
        for name in INHERITED {
            if let Some(value) = std::env::var_os(name) {
                c.env(name, value);
            }
        }
        for (name, value) in env {
            c.env(name, value);
        }
        if let Some(dir) = cwd {
            c.current_dir(dir);
        }
        #[cfg(target_os = "linux")]
        // SAFETY: the closure runs in the forked child before exec and calls only
        // prctl(2) and getppid(2), which are async-signal-safe.
        unsafe {
            c.pre_exec(|| {
                // killed with Graft (the thread that started it lives as long as the
                // runtime's workers); a parent already gone means Graft died meanwhile
                if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                if libc::getppid() == 1 {
                    return Err(std::io::Error::other("Graft exited while starting it"));
                }
                Ok(())
            });
        }
    });
    command.wrap(ProcessGroup::leader()).wrap(KillOnDrop);
    let (transport, stderr) = TokioChildProcess::builder(command)
        .stderr(Stdio::piped())
        .spawn()?;
    let pid = transport.id();
    Ok((transport, stderr, pid))
}
