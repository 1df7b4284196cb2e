//! The event logs of a live run: every process appends JSON lines stamped with real time,
//! and [`merge`] turns them into one [`History`] in the simulator's format.
//!
//! A log is a history file (`fencesim_model::history::wire`: the header line, then one
//! version-1 event per line) whose lines may also carry the etcd revision, `rev`.

use std::{
    collections::BTreeSet,
    fs::{File, OpenOptions},
    io::{BufRead, BufReader, Write},
    path::Path,
    sync::Mutex,
};

use fencesim_model::history::{
    wire::{self, Version},
    Event, EventKind, History,
};
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
#[derive(Clone, Debug, PartialEq)]
pub struct Line {
    /// The event (its `t_ns` in Unix nanoseconds).
    pub event: Event,
    /// The etcd revision of a grant, release or expiry.
    pub rev: Option<i64>,
}

/// A [`Line`] as a log holds it: a version-1 history record and the optional `rev`.
#[derive(Serialize, Deserialize)]
struct LineV1 {
    #[serde(flatten)]
    record: wire::v1::Record,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    rev: Option<i64>,
}

impl Line {
    /// The line as written to a log (no newline).
    pub fn to_json(&self) -> String {
        let line = LineV1 {
            record: wire::v1::Record::from(&self.event),
            rev: self.rev,
        };
        serde_json::to_string(&line).expect("records serialize")
    }

    /// Reads one log line of `version`.
    pub fn parse(version: Version, text: &str) -> Result<Line, serde_json::Error> {
        match version {
            Version::V1 => serde_json::from_str::<LineV1>(text).map(|line| Line {
                event: line.record.into(),
                rev: line.rev,
            }),
        }
    }
}

/// An append-only event log, flushed line by line (a SIGKILL loses nothing logged).
#[derive(Debug)]
pub struct Log {
    file: Mutex<File>,
}

impl Log {
    /// Opens (creates) the log at `path` for appending; a new (empty) log gets the history
    /// file's header line first.
    pub fn open(path: &Path) -> std::io::Result<Log> {
        let mut file = OpenOptions::new().create(true).append(true).open(path)?;
        if file.metadata()?.len() == 0 {
            file.write_all(format!("{}\n", wire::header_line()).as_bytes())?;
        }
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
        let mut text = line.to_json();
        text.push('\n');
        let mut file = self
            .file
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        // A full disk loses the line; the merged history then shows the gap to the checker.
        let _ = file.write_all(text.as_bytes());
    }
}

/// Reads a log; a torn last line (the process was killed mid-write) is skipped. A header of
/// another schema or of a version this build does not read is an `InvalidData` error naming
/// line 1 and the field; a log without a header is version 1.
pub fn read(path: &Path) -> std::io::Result<Vec<Line>> {
    let file = File::open(path)?;
    let mut lines = Vec::new();
    let mut version = None;
    for (index, line) in BufReader::new(file).lines().enumerate() {
        let line = line?;
        if line.trim().is_empty() {
            continue;
        }
        let current = match version {
            Some(known) => known,
            None => {
                let found = wire::header(&line).map_err(|error| {
                    std::io::Error::new(
                        std::io::ErrorKind::InvalidData,
                        format!(
                            "line {}: field `{}`: {}",
                            index + 1,
                            error.field,
                            error.message
                        ),
                    )
                })?;
                version = Some(found.unwrap_or(Version::V1));
                if found.is_some() {
                    continue;
                }
                Version::V1
            }
        };
        if let Ok(parsed) = Line::parse(current, &line) {
            lines.push(parsed);
        }
    }
    Ok(lines)
}

/// The first grant of `scope` stamped shortly before `expired_ns`: the poller saw the
/// deletion after that grant, which needed the lock free, so the expiry must precede it (the
/// expired tenure's own grant is seconds older: a TTL is at least 2 x tickTime).
fn grant_before(grants: &[(String, u64)], scope: &str, expired_ns: u64) -> Option<u64> {
    // A deletion seen at `expired_ns` happened at most one poll (5 ms) plus a round trip
    // earlier; a grant in that window came after it.
    let earliest = expired_ns.saturating_sub(50 * fencesim_model::NS_PER_MS);
    grants
        .iter()
        .filter(|(s, t)| s == scope && *t >= earliest && *t <= expired_ns)
        .map(|(_, t)| *t)
        .min()
}

/// Merges the logs of a run into a history whose times are nanoseconds since `epoch_unix_ns`.
///
/// etcd deletes seen by the watch (`Expired` lines) at a revision that a worker's `Released`
/// also names are the release's own delete and are dropped. The watch sees a delete a little
/// after it happened, and a worker records its release when the reply arrives, so an expiry
/// or a release is stamped before the lease service's next event (the revision order is the
/// service's real order; without revisions, before the scope's next grant a moment later).
/// Ties keep the logs' order.
pub fn merge(epoch_unix_ns: u64, logs: Vec<Vec<Line>>) -> History {
    let mut lines: Vec<Line> = logs.into_iter().flatten().collect();
    drop_explained_expiries(&mut lines);
    stamp_before_next_grant(&mut lines);
    stamp_before_next_revision(&mut lines);
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

/// The scope and token of a grant, release or expiry.
fn tenure(kind: &EventKind) -> Option<(String, u64)> {
    match kind {
        EventKind::Granted { scope, token, .. }
        | EventKind::Released { scope, token, .. }
        | EventKind::Expired { scope, token, .. } => Some((scope.clone(), *token)),
        _ => None,
    }
}

/// Drops the expiries that are not one: an etcd delete at a release's revision (the release's
/// own delete), and, without revisions (ZooKeeper's poller), a vanished lock node whose tenure
/// was not granted or was released.
fn drop_explained_expiries(lines: &mut Vec<Line>) {
    let released: BTreeSet<i64> = lines
        .iter()
        .filter(|l| matches!(l.event.kind, EventKind::Released { .. }))
        .filter_map(|l| l.rev)
        .collect();
    lines.retain(|l| {
        !(matches!(l.event.kind, EventKind::Expired { .. })
            && l.rev.is_some_and(|rev| released.contains(&rev)))
    });
    let tenures = |lines: &[Line], of: fn(&EventKind) -> bool| -> BTreeSet<(String, u64)> {
        lines
            .iter()
            .filter(|l| of(&l.event.kind))
            .filter_map(|l| tenure(&l.event.kind))
            .collect()
    };
    let granted = tenures(lines, |k| matches!(k, EventKind::Granted { .. }));
    let released_tenures = tenures(lines, |k| matches!(k, EventKind::Released { .. }));
    lines.retain(|l| {
        if l.rev.is_some() || !matches!(l.event.kind, EventKind::Expired { .. }) {
            return true;
        }
        let key = tenure(&l.event.kind).expect("an expiry names its tenure");
        granted.contains(&key) && !released_tenures.contains(&key)
    });
}

/// Without revisions: an expiry or a release goes before the scope's next grant. The poller
/// sees a deletion up to one poll late, and a worker's release is stamped when its reply
/// arrived, which can be after the next holder's grant (measured live: 88 µs after it); the
/// lock was free for that grant, so either happened before it.
fn stamp_before_next_grant(lines: &mut [Line]) {
    let grants: Vec<(String, u64)> = lines
        .iter()
        .filter_map(|l| match &l.event.kind {
            EventKind::Granted { scope, .. } => Some((scope.clone(), l.event.t_ns)),
            _ => None,
        })
        .collect();
    for line in lines.iter_mut() {
        if line.rev.is_some() {
            continue;
        }
        if let EventKind::Expired { scope, .. } | EventKind::Released { scope, .. } =
            &line.event.kind
        {
            if let Some(next) = grant_before(&grants, scope, line.event.t_ns) {
                line.event.t_ns = line.event.t_ns.min(next.saturating_sub(1));
            }
        }
    }
}

/// With revisions (etcd): an expiry or a release goes before the service's next event (the
/// revision order is the service's real order).
fn stamp_before_next_revision(lines: &mut [Line]) {
    let service: Vec<(i64, u64)> = lines
        .iter()
        .filter_map(|l| l.rev.map(|rev| (rev, l.event.t_ns)))
        .collect();
    for line in lines.iter_mut() {
        if let (EventKind::Expired { .. } | EventKind::Released { .. }, Some(rev)) =
            (&line.event.kind, line.rev)
        {
            if let Some(next) = service
                .iter()
                .filter(|(other, _)| *other > rev)
                .map(|(_, t)| *t)
                .min()
            {
                line.event.t_ns = line.event.t_ns.min(next.saturating_sub(1));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(t_ms: u64, node: &str, kind: EventKind, rev: Option<i64>) -> Line {
        Line {
            event: Event {
                t_ns: t_ms * 1_000_000,
                node: node.into(),
                kind,
            },
            rev,
        }
    }

    fn granted(holder: &str, token: u64) -> EventKind {
        EventKind::Granted {
            scope: "job-1".into(),
            holder: holder.into(),
            token,
            expires_mono_ms: 0.0,
        }
    }

    fn expired(holder: &str, token: u64) -> EventKind {
        EventKind::Expired {
            scope: "job-1".into(),
            holder: holder.into(),
            token,
        }
    }

    #[test]
    fn a_log_starts_with_the_header_and_reads_back_with_its_revisions() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("coordinator-0.jsonl");
        let log = Log::open(&path).unwrap();
        log.record_at(5_000_000, "coordinator", granted("worker-0", 3), Some(12));
        drop(log);
        // Reopened (appending): no second header.
        let log = Log::open(&path).unwrap();
        log.record_at(9_000_000, "coordinator", expired("worker-0", 3), None);
        drop(log);
        let text = std::fs::read_to_string(&path).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 3, "{text}");
        assert_eq!(lines[0], wire::header_line());
        assert!(
            lines[1].ends_with(r#""expires_mono_ms":0.0,"rev":12}"#),
            "{text}"
        );
        assert!(!lines[2].contains("rev"), "{text}");
        let read = read(&path).unwrap();
        assert_eq!(
            read,
            vec![
                line(5, "coordinator", granted("worker-0", 3), Some(12)),
                line(9, "coordinator", expired("worker-0", 3), None),
            ]
        );
    }

    #[test]
    fn a_log_without_header_is_version_1_and_an_unknown_version_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let old = dir.path().join("old.jsonl");
        let event = r#"{"t_ns":1,"node":"worker-0","event":"crashed","rev":4}"#;
        // A torn last line is skipped, as before.
        std::fs::write(&old, format!("{event}\n{{\"t_ns\":2,\"no")).unwrap();
        let lines = read(&old).unwrap();
        let crashed = Line {
            event: Event {
                t_ns: 1,
                node: "worker-0".into(),
                kind: EventKind::Crashed,
            },
            rev: Some(4),
        };
        assert_eq!(lines, vec![crashed]);

        let newer = dir.path().join("newer.jsonl");
        std::fs::write(
            &newer,
            format!("{{\"schema\":\"fencesim-history\",\"version\":2}}\n{event}\n"),
        )
        .unwrap();
        let error = read(&newer).unwrap_err();
        assert_eq!(error.kind(), std::io::ErrorKind::InvalidData);
        let message = error.to_string();
        assert!(
            message.starts_with("line 1: field `version`: expected a schema version")
                && message.contains("got 2"),
            "{message}"
        );
    }

    #[test]
    fn zookeeper_expiries_without_revisions_are_kept_only_for_granted_unreleased_tenures() {
        let logs = vec![vec![
            line(100, "coordinator", granted("worker-0", 1), None),
            // A lost campaign's node vanished: never granted, no expiry.
            line(150, "coordinator", expired("worker-1", 2), None),
            line(5_000, "coordinator", granted("worker-1", 40), None),
            // The poller saw worker-0's node gone 3 ms after worker-1's grant.
            line(5_003, "coordinator", expired("worker-0", 1), None),
            line(
                6_000,
                "coordinator",
                EventKind::Released {
                    scope: "job-1".into(),
                    holder: "worker-1".into(),
                    token: 40,
                },
                None,
            ),
            // A release's own deletion: not an expiry.
            line(6_004, "coordinator", expired("worker-1", 40), None),
        ]];
        let history = merge(0, logs);
        let expiries: Vec<(u64, u64)> = history
            .events
            .iter()
            .filter_map(|e| match e.kind {
                EventKind::Expired { token, .. } => Some((e.t_ns, token)),
                _ => None,
            })
            .collect();
        // Stamped just before the grant that needed the lock free.
        assert_eq!(expiries, vec![(5_000 * 1_000_000 - 1, 1)]);
        let order: Vec<&str> = history
            .events
            .iter()
            .map(|e| match e.kind {
                EventKind::Granted { .. } => "granted",
                EventKind::Expired { .. } => "expired",
                EventKind::Released { .. } => "released",
                _ => "other",
            })
            .collect();
        assert_eq!(order, ["granted", "expired", "granted", "released"]);
    }

    #[test]
    fn a_release_recorded_after_the_next_grant_is_stamped_before_it() {
        let released = |holder: &str, token| EventKind::Released {
            scope: "job-1".into(),
            holder: holder.into(),
            token,
        };
        // etcd (measured live): worker-0's revoke deleted the key at revision 3, the watch saw
        // it, worker-1's put at revision 4 was stamped at 4_810 ms, and worker-0 logged its
        // release when the reply arrived, just after.
        let logs = vec![
            vec![
                line(15, "coordinator", granted("worker-0", 2), Some(2)),
                line(4_810, "coordinator", granted("worker-1", 4), Some(4)),
            ],
            vec![line(4_811, "coordinator", released("worker-0", 2), Some(3))],
            vec![line(4_812, "coordinator", expired("worker-0", 2), Some(3))],
        ];
        let order = |history: &History| -> Vec<(String, u64)> {
            history
                .events
                .iter()
                .map(|e| match &e.kind {
                    EventKind::Granted { holder, .. } => (format!("granted {holder}"), e.t_ns),
                    EventKind::Released { holder, .. } => (format!("released {holder}"), e.t_ns),
                    EventKind::Expired { holder, .. } => (format!("expired {holder}"), e.t_ns),
                    _ => ("other".into(), e.t_ns),
                })
                .collect()
        };
        assert_eq!(
            order(&merge(0, logs)),
            [
                ("granted worker-0".to_string(), 15_000_000),
                ("released worker-0".to_string(), 4_810_000_000 - 1),
                ("granted worker-1".to_string(), 4_810_000_000),
            ]
        );
        // ZooKeeper (no revisions): the session's close was answered after the next grant.
        let logs = vec![vec![
            line(100, "coordinator", granted("worker-0", 1), None),
            line(5_000, "coordinator", granted("worker-1", 40), None),
            line(5_001, "coordinator", released("worker-0", 1), None),
        ]];
        assert_eq!(
            order(&merge(0, logs)),
            [
                ("granted worker-0".to_string(), 100_000_000),
                ("released worker-0".to_string(), 5_000_000_000 - 1),
                ("granted worker-1".to_string(), 5_000_000_000),
            ]
        );
    }
}
