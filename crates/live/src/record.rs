//! The event logs of a live run: every process appends JSON lines stamped with real time,
//! and [`merge`] turns them into one [`History`] in the simulator's format.

use std::{
    collections::BTreeSet,
    fs::{File, OpenOptions},
    io::{BufRead, BufReader, Write},
    path::Path,
    sync::Mutex,
};

use fencesim_model::history::{Event, EventKind, History};
use serde::{Deserialize, Serialize};

/// Real time in nanoseconds since the Unix epoch: live mode measures the real world, so it
/// reads the real clock (the simulator never does; `clippy.toml` bans it there). Every
/// process of a run is on one machine, so their readings share one clock.
#[allow(clippy::disallowed_methods)]
pub fn now_unix_ns() -> u64 {
    let since = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    u64::try_from(since.as_nanos()).unwrap_or(u64::MAX)
}

/// One logged line: an event stamped with real time (`t_ns` is Unix ns here), and the etcd
/// revision it happened at, for the lease service's events.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Line {
    /// The event (its `t_ns` in Unix nanoseconds).
    #[serde(flatten)]
    pub event: Event,
    /// The etcd revision of a grant, release or expiry.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rev: Option<i64>,
}

/// An append-only event log, flushed line by line (a SIGKILL loses nothing logged).
#[derive(Debug)]
pub struct Log {
    file: Mutex<File>,
}

impl Log {
    /// Opens (creates) the log at `path` for appending.
    pub fn open(path: &Path) -> std::io::Result<Log> {
        let file = OpenOptions::new().create(true).append(true).open(path)?;
        Ok(Log {
            file: Mutex::new(file),
        })
    }

    /// Stamps `kind` with the current real time and appends it.
    pub fn record(&self, node: &str, kind: EventKind, rev: Option<i64>) {
        self.record_at(now_unix_ns(), node, kind, rev);
    }

    /// Appends `kind` stamped `t_unix_ns`.
    pub fn record_at(&self, t_unix_ns: u64, node: &str, kind: EventKind, rev: Option<i64>) {
        let line = Line {
            event: Event {
                t_ns: t_unix_ns,
                node: node.to_string(),
                kind,
            },
            rev,
        };
        let mut text = serde_json::to_string(&line).expect("events serialize");
        text.push('\n');
        let mut file = self
            .file
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        // A full disk loses the line; the merged history then shows the gap to the checker.
        let _ = file.write_all(text.as_bytes());
    }
}

/// Reads a log; a torn last line (the process was killed mid-write) is skipped.
pub fn read(path: &Path) -> std::io::Result<Vec<Line>> {
    let file = File::open(path)?;
    let mut lines = Vec::new();
    for line in BufReader::new(file).lines() {
        if let Ok(parsed) = serde_json::from_str::<Line>(&line?) {
            lines.push(parsed);
        }
    }
    Ok(lines)
}

/// Merges the logs of a run into a history whose times are nanoseconds since `epoch_unix_ns`.
///
/// etcd deletes seen by the watch (`Expired` lines) at a revision that a worker's `Released`
/// also names are the release's own delete and are dropped. The watch sees a delete a little
/// after it happened, so an expiry is stamped no later than the lease service's next event
/// (the revision order is the service's real order). Ties keep the logs' order.
pub fn merge(epoch_unix_ns: u64, logs: Vec<Vec<Line>>) -> History {
    let mut lines: Vec<Line> = logs.into_iter().flatten().collect();
    let released: BTreeSet<i64> = lines
        .iter()
        .filter(|l| matches!(l.event.kind, EventKind::Released { .. }))
        .filter_map(|l| l.rev)
        .collect();
    lines.retain(|l| {
        !(matches!(l.event.kind, EventKind::Expired { .. })
            && l.rev.is_some_and(|rev| released.contains(&rev)))
    });
    let service: Vec<(i64, u64)> = lines
        .iter()
        .filter_map(|l| l.rev.map(|rev| (rev, l.event.t_ns)))
        .collect();
    for line in &mut lines {
        if let (EventKind::Expired { .. }, Some(rev)) = (&line.event.kind, line.rev) {
            if let Some(next) = service
                .iter()
                .filter(|(other, _)| *other > rev)
                .map(|(_, t)| *t)
                .min()
            {
                line.event.t_ns = line.event.t_ns.min(next);
            }
        }
    }
    lines.sort_by_key(|l| l.event.t_ns);
    let mut history = History::default();
    for line in lines {
        history.push(
            line.event.t_ns.saturating_sub(epoch_unix_ns),
            line.event.node,
            line.event.kind,
        );
    }
    history
}
