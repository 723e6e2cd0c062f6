//! A local MCP server's process (issue 27.4): started without a shell, in its own process
//! group, with only the environment Graft gives it, and never outliving Graft.
//!
//! On Linux the server runs under a small watcher forked inside the new process group
//! before the server is executed: the watcher gets SIGTERM when Graft dies, even by
//! SIGKILL (`PR_SET_PDEATHSIG`), and then kills the whole group (the server and what it
//! started, such as the `node` an `npx` runs). When the server ends, what it started and
//! left running ends too (the group is killed), and the watcher goes with it. A signal
//! to the group from Graft (a stop) ends them all.

use process_wrap::tokio::{CommandWrap, ProcessGroup};
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
/// stopping it stops what it started; it is killed when its handle is dropped; and on
/// Linux the group is killed when Graft dies (see the module). Returns the transport,
/// its stderr and the process id (the watcher's on Linux). Errors: the program cannot be
/// started (not found, not executable, a bad directory).
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
        // SAFETY: the closure runs in the forked child before exec; it and `watch` call
        // only async-signal-safe system calls (getppid, fork, prctl, close_range,
        // sigprocmask, sigwaitinfo, waitpid, kill, _exit) and allocate nothing.
        unsafe {
            c.pre_exec(|| {
                let graft = libc::getppid();
                match libc::fork() {
                    -1 => Err(std::io::Error::last_os_error()),
                    // the server: killed when its watcher dies
                    0 => {
                        if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
                            return Err(std::io::Error::last_os_error());
                        }
                        Ok(())
                    }
                    server => watch(server, graft),
                }
            });
        }
    });
    // no KillOnDrop: tokio's would SIGKILL the watcher alone, leaving the group; rmcp's drop
    // kills through the wrapper, which signals the whole process group
    command.wrap(ProcessGroup::leader());
    let (transport, stderr) = TokioChildProcess::builder(command)
        .stderr(Stdio::piped())
        .spawn()?;
    let pid = transport.id();
    Ok((transport, stderr, pid))
}

/// The watcher of `server` (see the module): never returns.
#[cfg(target_os = "linux")]
unsafe fn watch(server: libc::pid_t, graft: libc::pid_t) -> ! {
    // the server holds the pipes: the watcher keeps none of them open (nor the pipe
    // its spawner waits on for the exec)
    if libc::syscall(libc::SYS_close_range, 0u32, u32::MAX, 0u32) != 0 {
        for fd in 0..4096 {
            libc::close(fd);
        }
    }
    let mut set: libc::sigset_t = std::mem::zeroed();
    libc::sigemptyset(&mut set);
    for sig in [libc::SIGTERM, libc::SIGCHLD, libc::SIGINT, libc::SIGHUP] {
        libc::sigaddset(&mut set, sig);
    }
    libc::sigprocmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
    libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM);
    let exited = |status: libc::c_int| -> libc::c_int {
        if libc::WIFEXITED(status) {
            libc::WEXITSTATUS(status)
        } else {
            128 + libc::WTERMSIG(status)
        }
    };
    loop {
        // Graft died before the death signal was armed, or meanwhile
        if libc::getppid() != graft {
            libc::kill(0, libc::SIGKILL);
            libc::_exit(137);
        }
        let mut status: libc::c_int = 0;
        if libc::waitpid(server, &mut status, libc::WNOHANG) == server {
            // what the server started and left running ends with it, and so does the
            // watcher (its exit status is then SIGKILL's, not the server's)
            libc::kill(0, libc::SIGKILL);
            libc::_exit(exited(status));
        }
        let mut info: libc::siginfo_t = std::mem::zeroed();
        match libc::sigwaitinfo(&set, &mut info) {
            libc::SIGCHLD | -1 => {}
            _ => {
                // Graft died, or asked the group to stop: everything in it ends
                libc::kill(0, libc::SIGKILL);
                libc::_exit(137);
            }
        }
    }
}
