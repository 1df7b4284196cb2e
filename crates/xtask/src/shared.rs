//! What every tool shares, a leaf the others depend on: the bad-input error (exit code 2)
//! and the wall clock of the tools' own timings.

/// Wall time for the tools' own timings (never inside a simulation or a deterministic report).
#[allow(clippy::disallowed_methods)]
pub(crate) fn wall_now() -> std::time::Instant {
    std::time::Instant::now()
}

/// A usage or input error: printed, exit code 2.
#[derive(Debug)]
pub(crate) struct InputError(pub(crate) String);

impl<E: std::fmt::Display> From<E> for InputError {
    fn from(error: E) -> Self {
        InputError(error.to_string())
    }
}
