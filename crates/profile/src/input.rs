//! Reading an input file: bounded in bytes and per line, refusing devices and FIFOs, and
//! keeping account of every line a parser could not use (counted, the first few kept with
//! their line numbers), so nothing is dropped silently.

use std::io::{BufRead, BufReader, Read};
use std::path::Path;

/// Largest input read, in bytes: 256 MiB. A JVM rotates its GC log at 20 MiB by default
/// (`-Xlog:...:filecount=5,filesize=20M`); a day of gctrace or a Prometheus scrape is far
/// smaller. A larger file is refused (take its tail with `tail -c`), never half-read.
pub const MAX_INPUT_BYTES: u64 = 256 << 20;

/// Longest line kept, in bytes: 64 KiB. A longer line (binary junk, a file of zeros) is
/// counted as unusable and its bytes are skipped without being stored.
pub const MAX_LINE_BYTES: usize = 64 << 10;

/// Unusable lines reported with their text (the rest are counted).
pub const SHOWN_LINES: usize = 5;

/// Why an input could not be used at all (exit code 2).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InputError {
    /// The file, as named by the caller.
    pub file: String,
    /// What was expected and what was found.
    pub expected: String,
}

impl std::fmt::Display for InputError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.file, self.expected)
    }
}

impl std::error::Error for InputError {}

/// A line a parser could not use: its number, why, and (the first [`SHOWN_LINES`]) its text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unusable {
    /// 1-based line number.
    pub line: usize,
    /// Why it was not used.
    pub reason: String,
    /// The line's start (at most 120 characters, control characters shown as `?`).
    pub excerpt: String,
}

/// The account of an input's lines: how many were read, used, recognised but irrelevant
/// (e.g. a GC log's heap-summary lines), and unusable.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LineReport {
    /// Lines read.
    pub lines: usize,
    /// Lines that gave data.
    pub used: usize,
    /// Lines recognised as the format's own and not data (comments, other log tags).
    pub skipped: usize,
    /// Lines not recognised or malformed.
    pub unusable: usize,
    /// The first [`SHOWN_LINES`] unusable lines.
    pub first_unusable: Vec<Unusable>,
}

impl LineReport {
    /// Counts line `line` as unusable for `reason`, keeping its text if among the first few.
    pub fn unusable(&mut self, line: usize, reason: &str, text: &str) {
        self.unusable += 1;
        if self.first_unusable.len() < SHOWN_LINES {
            self.first_unusable.push(Unusable {
                line,
                reason: reason.to_string(),
                excerpt: excerpt(text),
            });
        }
    }

    /// The report for people: one summary line, then the first unusable lines.
    pub fn describe(&self, file: &str) -> String {
        let mut out = format!(
            "{file}: {} lines: {} used, {} recognised and skipped, {} unusable",
            self.lines, self.used, self.skipped, self.unusable
        );
        for unusable in &self.first_unusable {
            out.push_str(&format!(
                "\n  {file}:{}: {}: {}",
                unusable.line, unusable.reason, unusable.excerpt
            ));
        }
        if self.unusable > self.first_unusable.len() {
            out.push_str(&format!(
                "\n  ... and {} more unusable lines",
                self.unusable - self.first_unusable.len()
            ));
        }
        out
    }
}

fn excerpt(text: &str) -> String {
    let shown: String = text
        .chars()
        .take(120)
        .map(|c| if c.is_control() { '?' } else { c })
        .collect();
    if text.chars().count() > 120 {
        format!("{shown}...")
    } else {
        shown
    }
}

/// One line handed to a parser.
pub enum Line<'a> {
    /// A line's text (without its newline), valid UTF-8 and at most [`MAX_LINE_BYTES`].
    Text(&'a str),
    /// A line that is too long or not UTF-8: the parser only counts it.
    Unreadable(&'static str),
}

/// Opens `path` after checking it is a regular file (a FIFO would block, a device such as
/// `/dev/zero` never ends).
pub fn open(path: &Path) -> Result<std::fs::File, InputError> {
    let file = path.display().to_string();
    let error = |expected: String| InputError {
        file: file.clone(),
        expected,
    };
    let metadata = std::fs::metadata(path)
        .map_err(|e| error(format!("expected a readable file, got: {e}")))?;
    if !metadata.is_file() {
        let what = if metadata.is_dir() {
            "a directory"
        } else {
            "a device, FIFO or socket"
        };
        return Err(error(format!("expected a regular file, got {what}")));
    }
    std::fs::File::open(path).map_err(|e| error(format!("expected a readable file, got: {e}")))
}

/// Reads `reader` line by line, at most `max_bytes` in all, calling `each(line_number, line)`.
/// A reader with more than `max_bytes` is an error after `max_bytes + 1` bytes, whatever it
/// holds (so `/dev/zero` ends); memory stays within one line of [`MAX_LINE_BYTES`].
pub fn for_each_line(
    reader: impl Read,
    file: &str,
    max_bytes: u64,
    mut each: impl FnMut(usize, Line<'_>),
) -> Result<(), InputError> {
    let mut reader = BufReader::new(reader.take(max_bytes + 1));
    let mut total: u64 = 0;
    let mut number = 0;
    let mut buffer: Vec<u8> = Vec::new();
    loop {
        buffer.clear();
        // Read one line, keeping at most MAX_LINE_BYTES of it.
        let mut too_long = false;
        let mut ended = false;
        let mut read_any = false;
        loop {
            let chunk = reader.fill_buf().map_err(|e| InputError {
                file: file.to_string(),
                expected: format!("expected a readable file, got: {e}"),
            })?;
            if chunk.is_empty() {
                ended = true;
                break;
            }
            read_any = true;
            let (take, newline) = match chunk.iter().position(|&byte| byte == b'\n') {
                Some(at) => (at + 1, true),
                None => (chunk.len(), false),
            };
            let room = MAX_LINE_BYTES.saturating_sub(buffer.len());
            if take > room + usize::from(newline) {
                too_long = true;
            }
            if !too_long {
                buffer.extend_from_slice(&chunk[..take]);
            }
            reader.consume(take);
            total += take as u64;
            if total > max_bytes {
                return Err(InputError {
                    file: file.to_string(),
                    expected: format!(
                        "expected at most {max_bytes} bytes ({} MiB), got more; take the part \
                         you need (e.g. `tail -c 200M`)",
                        max_bytes >> 20
                    ),
                });
            }
            if newline {
                break;
            }
        }
        if !read_any {
            return Ok(());
        }
        number += 1;
        if too_long {
            each(number, Line::Unreadable("a line longer than 64 KiB"));
        } else {
            if buffer.last() == Some(&b'\n') {
                buffer.pop();
            }
            if buffer.last() == Some(&b'\r') {
                buffer.pop();
            }
            match std::str::from_utf8(&buffer) {
                Ok(text) => each(number, Line::Text(text)),
                Err(_) => each(number, Line::Unreadable("not UTF-8 text")),
            }
        }
        if ended {
            return Ok(());
        }
    }
}
