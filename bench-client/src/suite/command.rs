//! A server the user starts with a command (`ab --before-cmd`/`--after-cmd`):
//! every start gets a free loopback address, written into the command's
//! placeholders, and is ready once that address accepts connections.

use std::net::{SocketAddr, TcpListener};
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use anyhow::{Context, ensure};

use crate::sys::{CpuList, ServerProcess};

/// Checks that the command of `flag` says where to listen.
///
/// # Errors
/// A command with neither `{addr}` nor `{port}`: the server would listen
/// where `ab` cannot know.
pub fn check(flag: &str, command: &str) -> anyhow::Result<()> {
    ensure!(!command.trim().is_empty(), "{flag} is empty");
    ensure!(
        command.contains("{addr}") || command.contains("{port}"),
        "{flag} names neither {{addr}} nor {{port}}: ab chooses where each start listens, e.g. \
         --before-cmd 'my-server --listen {{addr}}'"
    );
    Ok(())
}

/// `command` with its placeholders replaced for `addr`.
pub fn expand(command: &str, addr: SocketAddr) -> String {
    command
        .replace("{addr}", &addr.to_string())
        .replace("{host}", &addr.ip().to_string())
        .replace("{port}", &addr.port().to_string())
}

/// A loopback address no one listens on now (the kernel's choice of a free
/// port, released at once for the server to bind).
fn free_loopback() -> anyhow::Result<SocketAddr> {
    let listener = TcpListener::bind("127.0.0.1:0").context("cannot find a free port on 127.0.0.1")?;
    Ok(listener.local_addr()?)
}

/// Starts `command` (named `name`) pinned to `cpus` on a free loopback
/// address and waits up to `ready` for it to accept connections (less once
/// `stop` is set). Says so when no process of its group holds the
/// listening socket: its server CPU is then the shell's.
///
/// # Errors
/// A command that cannot start, exits first (its first line on stderr
/// quoted), does not listen in time, or `stop`; it is stopped, with
/// whatever it started in its process group.
pub fn start(
    name: &str,
    command: &str,
    cpus: &CpuList,
    ready: Duration,
    stop: &AtomicBool,
) -> anyhow::Result<ServerProcess> {
    let addr = free_loopback()?;
    let mut server = ServerProcess::start_shell(name, &expand(command, addr), addr, cpus)?;
    server.wait_listening(ready, stop)?;
    if !server.serves_from_its_group() {
        eprintln!(
            "warning: {name}: no process of its group holds {addr} (it left the group, or runs in a container): \
             its server CPU figures are not the server's"
        );
    }
    Ok(server)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_are_replaced_and_a_command_must_say_where_to_listen() {
        let addr: SocketAddr = "127.0.0.1:8123".parse().unwrap();
        assert_eq!(
            expand("srv --bind {host} --port {port} # {addr}", addr),
            "srv --bind 127.0.0.1 --port 8123 # 127.0.0.1:8123"
        );
        assert!(check("--before-cmd", "srv --addr {addr}").is_ok());
        assert!(check("--before-cmd", "srv -p {port}").is_ok());
        let err = check("--after-cmd", "srv --host {host}").unwrap_err().to_string();
        assert!(err.starts_with("--after-cmd names neither {addr} nor {port}"), "{err}");
        assert!(check("--after-cmd", "  ").unwrap_err().to_string().contains("is empty"));
    }
}
