//! The JSON-lines trace of one run: the history exactly as recorded, one event per line,
//! after the header line of the history file format (`fencesim_model::history::wire`).

use std::{io, path::Path};

use fencesim_model::history::{wire, History};

use crate::fs::write_atomic_with;

/// Writes `history` as JSON lines (the same bytes as `History::to_jsonl`, whose hash is the
/// trace hash) atomically: a temp file in the same directory, then a rename.
pub fn write_jsonl(history: &History, path: &Path) -> io::Result<()> {
    write_atomic_with(path, |writer| jsonl_into(history, writer))
}

/// Writes `history` as JSON lines into `writer` (for an [`crate::fs::OutputSet`]): the
/// header line, then one event per line (each written as it goes, not the whole file at once).
pub fn jsonl_into(history: &History, writer: &mut dyn io::Write) -> io::Result<()> {
    writer.write_all(wire::header_line().as_bytes())?;
    writer.write_all(b"\n")?;
    for event in &history.events {
        serde_json::to_writer(&mut *writer, &wire::v1::Record::from(event))
            .map_err(io::Error::other)?;
        writer.write_all(b"\n")?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use fencesim_model::history::{EventKind, PauseKind};

    use super::*;
    use crate::fs::tests::TempDir;

    #[test]
    fn trace_matches_to_jsonl_and_round_trips() {
        let mut history = History::default();
        history.push(
            0,
            "coordinator",
            EventKind::Granted {
                scope: "job-1".into(),
                holder: "worker-0".into(),
                token: 41,
                expires_mono_ms: 10_000.0,
            },
        );
        history.push(
            5,
            "worker-0",
            EventKind::Paused {
                kind: PauseKind::Gc,
                planned_ms: 15_000.0,
            },
        );
        history.push(
            9,
            "worker-0",
            EventKind::Resumed {
                kind: PauseKind::Gc,
            },
        );

        let tmp = TempDir::new("trace");
        let path = tmp.0.join("traces/seed-7.jsonl");
        write_jsonl(&history, &path).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(text, history.to_jsonl());
        assert_eq!(
            wire::parse_jsonl(&text, wire::Strictness::Lenient).unwrap(),
            history
        );
        let first = text.lines().next().unwrap();
        assert_eq!(first, r#"{"schema":"fencesim-history","version":1}"#);
    }

    #[test]
    fn empty_history_gives_the_header_alone() {
        let tmp = TempDir::new("trace-empty");
        let path = tmp.0.join("empty.jsonl");
        write_jsonl(&History::default(), &path).unwrap();
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            format!("{}\n", wire::header_line())
        );
    }
}
