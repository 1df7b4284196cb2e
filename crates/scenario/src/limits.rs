//! The limit on everything a scenario (or the command line) can ask for, enforced at
//! validation so a run is bounded before it starts. Each value and its reason:
//! docs/scenario-format.md, "Limits".

/// Longest duration of anything inside a run (TTLs, delays, timeouts, fault durations,
/// distribution parameters, clock offsets and steps): 7 days of virtual time. Real lease
/// TTLs are seconds to hours (Consul caps a session TTL at 24 h).
pub const MAX_DURATION_MS: u64 = 7 * 24 * 3_600_000;

/// Longest safety phase (`duration_ms`): 1 day of virtual time.
pub const MAX_RUN_DURATION_MS: u64 = 24 * 3_600_000;

/// Shortest mean of `workers.work_ms`: a worker whose work takes no time, with a network
/// that takes no time, would loop without virtual time advancing.
pub const MIN_WORK_MEAN_MS: f64 = 0.001;

/// Largest ratio `p99 / median` of a lognormal (σ ≈ 5.9): beyond it the samples leave any
/// range a duration can take.
pub const MAX_LOGNORMAL_RATIO: f64 = 1e6;

/// Most seeds in one range (`seeds`, `--seeds`) and most shards (`--shard K/N`).
pub const MAX_SEEDS: u64 = 10_000_000;

/// Most writes a worker makes under one lease.
pub const MAX_WRITES_PER_LEASE: u64 = 10_000;

/// Most entries in a list (`network.spikes_ms`, `faults.schedule`, `faults.random`).
pub const MAX_LIST_LEN: usize = 1_000;

/// Most points of an empirical distribution's table (`quantiles` or `samples`): a quantile
/// table of 1 000 points resolves every 0.1 % of the distribution, finer than any log a
/// profile is built from needs, and keeps a file that holds several well under its size limit.
pub const MAX_EMPIRICAL_POINTS: usize = 1_000;

/// Most random-fault occurrences per minute of one `[[faults.random]]` entry.
pub const MAX_RATE_PER_MIN: f64 = 600.0;

/// Longest scenario name, in bytes. The name becomes file and directory names
/// (`reports/<name>/`, `<name>-shrunk-seed-<N>.toml`, whose suffix adds up to 38 bytes, and a
/// shrunk scenario's name is shrunk again); file systems cap a name at 255 bytes.
pub const MAX_NAME_LEN: usize = 128;

/// Most events one seed records, whatever its `duration_ms` (`Scenario::event_budget`): a
/// seed's memory is bounded by bytes, not only by events. A recorded event costs about 450
/// bytes of peak memory (the history, the checker's index over it, the nodes' state; measured
/// with `/usr/bin/time -v fencesim run` on a day-long scenario at every limit, stopped at this
/// cap: 896 MB peak RSS), so a seed peaks below 1 GB; with `--jobs N`, N seeds at once.
pub const MAX_EVENTS_PER_SEED: usize = 2_000_000;

/// Most seeds run at a time (every command's `--jobs`, `FENCESIM_JOBS`, the library's
/// sweeps): each is a thread with its own runtime.
pub const MAX_JOBS: usize = 1024;

/// Largest scenario file read, in bytes.
pub const MAX_FILE_BYTES: u64 = 1 << 20;

/// `MAX_DURATION_MS` as a float, for the fractional fields.
pub(crate) const MAX_DURATION_MS_F64: f64 = MAX_DURATION_MS as f64;
