//! Network faults for real: a private network namespace (loopback only) and nftables rules in
//! it that drop every packet between a cut worker and the lease service.
//!
//! `fencesim live` re-executes itself under `unshare --net` when a run needs a cut
//! ([`reexec`]); inside, the lease service listens on every loopback address and worker N
//! talks to it at its own address ([`worker_addr`]), so one rule pair per worker — packets to
//! and from that address on the service's port — cuts exactly that worker, with real sockets
//! and real timeouts (a request in flight is never answered, a new connection's SYN is never
//! answered). The namespace, and every rule in it, vanishes with its last process, so nothing
//! is left on the host even after SIGKILL.
//!
//! Architecture Invariant: no rule is ever added outside the namespace the supervisor made:
//! [`Firewall::new`] refuses unless [`inside`] holds.

use std::{
    io::Write,
    net::{Ipv4Addr, SocketAddr},
    process::{Command, Stdio},
};

/// Set (to the supervisor's pid) by [`reexec`] in the re-executed supervisor's environment.
const MARK: &str = "FENCESIM_LIVE_NETNS";

/// Whether this process is a supervisor [`reexec`] started in a private network namespace:
/// the mark names this very process (workers inherit the variable, not the pid) and the
/// namespace has no interface but loopback.
pub fn inside() -> bool {
    let marked = std::env::var(MARK).ok() == Some(std::process::id().to_string());
    marked && only_loopback()
}

/// Whether the calling thread's network namespace has no interface but `lo`.
fn only_loopback() -> bool {
    let Ok(dev) = std::fs::read_to_string("/proc/self/net/dev") else {
        return false;
    };
    dev.lines()
        .skip(2)
        .filter_map(|line| line.split_once(':').map(|(name, _)| name.trim()))
        .all(|name| name == "lo")
}

/// Why network faults cannot be injected on this machine (`unshare`, `ip` and `nft` are
/// needed, and the right to create a network namespace), or `Ok` when they can. Runs each
/// tool once inside a throwaway namespace.
pub fn available() -> Result<(), String> {
    let probe = Command::new("unshare")
        .args([
            "--net",
            "--",
            "sh",
            "-c",
            "ip link set lo up && nft add table inet fencesim_probe",
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .output()
        .map_err(|error| format!("cannot run unshare (util-linux): {error}"))?;
    if probe.status.success() {
        Ok(())
    } else {
        Err(format!(
            "a private network namespace with nftables is needed (`unshare --net`, `ip`, `nft`; root or CAP_NET_ADMIN + CAP_SYS_ADMIN): {}",
            String::from_utf8_lossy(&probe.stderr).trim()
        ))
    }
}

/// Replaces this process (same pid) by `unshare --net -- EXE ARGS...` with the mark set, so
/// the supervisor and everything it starts run in a new, private network namespace. Returns
/// only on failure.
pub fn reexec(exe: &std::path::Path, args: &[std::ffi::OsString]) -> String {
    use std::os::unix::process::CommandExt as _;
    let error = Command::new("unshare")
        .arg("--net")
        .arg("--")
        .arg(exe)
        .args(args)
        .env(MARK, std::process::id().to_string())
        .exec();
    format!("cannot re-run under unshare --net: {error}")
}

/// Brings loopback up in the namespace (a new namespace's `lo` is down).
pub fn loopback_up() -> Result<(), String> {
    run("ip", &["link", "set", "lo", "up"], None)
}

/// The loopback address worker `index` reaches the lease service at: 127.1.0.1 for worker-0,
/// and so on (the whole of 127.0.0.0/8 is loopback).
pub fn worker_addr(index: usize, port: u16) -> SocketAddr {
    let offset = u32::try_from(index).unwrap_or(u32::MAX).min(0x00fe_fffd); // at most 127.255.255.254
    SocketAddr::from((Ipv4Addr::from(0x7f01_0001 + offset), port))
}

/// One run's nftables table: the cuts between workers and the lease service's port.
#[derive(Debug)]
pub struct Firewall {
    table: String,
    port: u16,
    cut: Vec<usize>,
}

impl Firewall {
    /// A table of its own for the service on `port`, empty (nothing cut).
    pub fn new(port: u16) -> Result<Firewall, String> {
        if !inside() {
            return Err(
                "network cuts need the private network namespace `fencesim live` makes".into(),
            );
        }
        let firewall = Firewall {
            table: format!("fencesim_{port}"),
            port,
            cut: Vec::new(),
        };
        firewall.apply()?;
        Ok(firewall)
    }

    /// Cuts (`true`) or reconnects worker `index`.
    pub fn set(&mut self, index: usize, cut: bool) -> Result<(), String> {
        self.cut.retain(|&i| i != index);
        if cut {
            self.cut.push(index);
        }
        self.apply()
    }

    /// Replaces the table's one chain with a drop rule pair per cut worker, in one
    /// transaction. The output hook sees every loopback packet, both directions.
    fn apply(&self) -> Result<(), String> {
        let Firewall { table, port, cut } = self;
        let mut script = format!(
            "table ip {table} {{}}\ndelete table ip {table}\ntable ip {table} {{\n  chain out {{\n    type filter hook output priority 0; policy accept;\n"
        );
        for &index in cut {
            let addr = worker_addr(index, *port).ip();
            script.push_str(&format!(
                "    ip daddr {addr} tcp dport {port} drop\n    ip saddr {addr} tcp sport {port} drop\n"
            ));
        }
        script.push_str("  }\n}\n");
        run("nft", &["-f", "-"], Some(&script))
    }
}

fn run(program: &str, args: &[&str], input: Option<&str>) -> Result<(), String> {
    let mut child = Command::new(program)
        .args(args)
        .stdin(if input.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|error| format!("cannot run {program}: {error}"))?;
    if let (Some(text), Some(mut stdin)) = (input, child.stdin.take()) {
        stdin
            .write_all(text.as_bytes())
            .map_err(|error| format!("{program}: {error}"))?;
    }
    let output = child
        .wait_with_output()
        .map_err(|error| format!("{program}: {error}"))?;
    if output.status.success() {
        Ok(())
    } else {
        Err(format!(
            "{program} {} failed: {}",
            args.join(" "),
            String::from_utf8_lossy(&output.stderr).trim()
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_worker_has_its_own_loopback_address() {
        assert_eq!(worker_addr(0, 2379).to_string(), "127.1.0.1:2379");
        assert_eq!(worker_addr(1, 2379).to_string(), "127.1.0.2:2379");
        assert_eq!(worker_addr(300, 1).to_string(), "127.1.1.45:1");
        assert!(worker_addr(usize::MAX, 1).ip().is_loopback());
    }
}
