//! What a command does when its stdout or stderr cannot be written. `println!` panics on a
//! write error, which would end any command with exit 101 and a panic message. Instead:
//!
//! - a closed pipe (EPIPE: `fencesim check scenarios/ | head -1`) ends the command quietly
//!   with 141, what a shell reports for a tool killed by SIGPIPE: the command did not finish,
//!   so a pipeline under `set -o pipefail` must not pass;
//! - any other error (ENOSPC: `> /dev/full`) prints `error: stdout: …` and exits 2.
//!
//! Either way the command's unfinished output files are removed first, as on a signal.

use std::io::Write;

/// The exit code of a command whose stdout or stderr was closed under it (128 + SIGPIPE).
pub(crate) const CLOSED: i32 = 141;

/// Installs the panic hook that turns a console write failure into its exit; any other panic
/// goes to the hook installed before.
pub(crate) fn install() {
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let payload = info.payload();
        let message = payload
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| payload.downcast_ref::<&str>().copied())
            .unwrap_or("");
        match failed_print(message) {
            Some((stream, error)) => fail(stream, error),
            None => previous(info),
        }
    }));
}

/// Writes `bytes` to stdout, ending the command as above when it cannot.
pub(crate) fn write_stdout(bytes: &[u8]) {
    let mut out = std::io::stdout().lock();
    if let Err(e) = out.write_all(bytes).and_then(|()| out.flush()) {
        fail("stdout", &e.to_string());
    }
}

/// The stream and the error of std's "failed printing to stdout: Broken pipe (os error 32)".
fn failed_print(message: &str) -> Option<(&'static str, &str)> {
    ["stdout", "stderr"].into_iter().find_map(|stream| {
        let error = message.strip_prefix("failed printing to ")?;
        Some((stream, error.strip_prefix(stream)?.strip_prefix(": ")?))
    })
}

fn closed(error: &str) -> bool {
    error.ends_with("(os error 32)")
}

fn fail(stream: &str, error: &str) -> ! {
    fencesim::fs::remove_pending_temps();
    if closed(error) {
        std::process::exit(CLOSED);
    }
    if stream == "stdout" {
        // stderr may be gone too: nothing more can be said then.
        let _ = writeln!(std::io::stderr(), "error: stdout: {error}");
    }
    std::process::exit(2);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn std_print_failures_are_recognised_and_nothing_else() {
        assert_eq!(
            failed_print("failed printing to stdout: Broken pipe (os error 32)"),
            Some(("stdout", "Broken pipe (os error 32)"))
        );
        assert_eq!(
            failed_print("failed printing to stderr: No space left on device (os error 28)"),
            Some(("stderr", "No space left on device (os error 28)"))
        );
        assert_eq!(failed_print("index out of bounds"), None);
        assert_eq!(failed_print("failed printing to stdoutx: y"), None);
        assert!(closed("Broken pipe (os error 32)"));
        assert!(!closed("No space left on device (os error 28)"));
        let broken = std::io::Error::from_raw_os_error(32);
        assert!(closed(&broken.to_string()));
    }
}
