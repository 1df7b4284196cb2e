//! The one bounded reader for every input file (scenarios, histories, check reports): a
//! file larger than its limit, `/dev/zero` or an endless pipe is refused at the limit instead
//! of being read until memory runs out.

use std::{
    fmt,
    io::Read as _,
    path::{Path, PathBuf},
};

/// Why an input file was not read.
#[derive(Debug)]
pub enum ReadError {
    /// It could not be opened or read.
    Unreadable(std::io::Error),
    /// It is a directory, a device or a socket (what it is).
    NotAFile(&'static str),
    /// It holds more than the limit (bytes); `size` when known up front.
    TooLarge {
        /// The limit, in bytes.
        max_bytes: u64,
        /// The file's size, for a regular file.
        size: Option<u64>,
    },
}

impl ReadError {
    /// The message for an input expected to be `what` ("a history file"): what was expected,
    /// with the limit, and what was found.
    pub fn expected(&self, what: &str) -> String {
        match self {
            ReadError::Unreadable(e) => format!("cannot read {what}: {e}"),
            ReadError::NotAFile(found) => {
                format!("expected {what} (a regular file or a pipe), got {found}")
            }
            ReadError::TooLarge { max_bytes, size } => format!(
                "expected {what} of at most {max_bytes} bytes ({}), got {}",
                human(*max_bytes),
                match size {
                    Some(size) => size.to_string(),
                    None => "more (reading stopped at the limit)".to_string(),
                }
            ),
        }
    }
}

impl fmt::Display for ReadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.expected("a file"))
    }
}

impl std::error::Error for ReadError {}

fn human(bytes: u64) -> String {
    if bytes >= 1 << 20 && bytes.is_multiple_of(1 << 20) {
        format!("{} MiB", bytes >> 20)
    } else {
        format!("{bytes} bytes")
    }
}

/// Reads all of `path`, at most `max_bytes`: a regular file's size is checked before
/// reading, and any file (a pipe, `/dev/stdin`) is read at most one byte past the limit.
/// Directories, devices and sockets are refused without being read: `/dev/zero` or
/// `/dev/urandom` is never a history or a scenario.
pub fn read_limited(path: &Path, max_bytes: u64) -> Result<Vec<u8>, ReadError> {
    use std::os::unix::fs::FileTypeExt as _;
    let meta = std::fs::metadata(path).map_err(ReadError::Unreadable)?;
    let kind = meta.file_type();
    if kind.is_dir() {
        return Err(ReadError::NotAFile("a directory"));
    }
    if kind.is_char_device() {
        return Err(ReadError::NotAFile("a character device"));
    }
    if kind.is_block_device() {
        return Err(ReadError::NotAFile("a block device"));
    }
    if kind.is_socket() {
        return Err(ReadError::NotAFile("a socket"));
    }
    if kind.is_file() && meta.len() > max_bytes {
        return Err(ReadError::TooLarge {
            max_bytes,
            size: Some(meta.len()),
        });
    }
    let file = std::fs::File::open(path).map_err(ReadError::Unreadable)?;
    let mut bytes = Vec::new();
    file.take(max_bytes + 1)
        .read_to_end(&mut bytes)
        .map_err(ReadError::Unreadable)?;
    if bytes.len() as u64 > max_bytes {
        return Err(ReadError::TooLarge {
            max_bytes,
            size: None,
        });
    }
    Ok(bytes)
}

/// Where a file stops being UTF-8: 1-based line and column (in bytes), and the byte offset.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct InvalidUtf8 {
    /// 1-based line.
    pub line: usize,
    /// 1-based column, in bytes.
    pub column: usize,
    /// 0-based byte offset in the file.
    pub byte: usize,
}

/// `bytes` as text, or where they stop being UTF-8.
pub fn into_text(bytes: Vec<u8>) -> Result<String, InvalidUtf8> {
    String::from_utf8(bytes).map_err(|e| {
        let byte = e.utf8_error().valid_up_to();
        let valid = &e.as_bytes()[..byte];
        let line_start = valid.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
        InvalidUtf8 {
            line: valid.iter().filter(|&&b| b == b'\n').count() + 1,
            column: byte - line_start + 1,
            byte,
        }
    })
}

/// Scenario files named by `paths`: files as given, directories expanded to the regular
/// files (or symlinks to them) named `*.toml`, in name order. A FIFO or device named
/// `*.toml` in a directory is skipped: reading it could block forever.
pub fn scenario_files(paths: &[PathBuf]) -> Result<Vec<PathBuf>, String> {
    let mut files = Vec::new();
    for path in paths {
        if path.is_dir() {
            let entries =
                std::fs::read_dir(path).map_err(|e| format!("{}: {e}", path.display()))?;
            let mut found: Vec<PathBuf> = entries
                .filter_map(|entry| entry.ok().map(|entry| entry.path()))
                .filter(|file| file.extension().is_some_and(|ext| ext == "toml"))
                .filter(|file| std::fs::metadata(file).is_ok_and(|meta| meta.is_file()))
                .collect();
            found.sort();
            if found.is_empty() {
                return Err(format!("{}: no *.toml scenario files", path.display()));
            }
            files.extend(found);
        } else {
            files.push(path.clone());
        }
    }
    Ok(files)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn invalid_utf8_is_located_by_line_and_column() {
        assert_eq!(into_text(b"ok\n".to_vec()).unwrap(), "ok\n");
        assert_eq!(
            into_text(b"a = 1\nbc\xff\n".to_vec()),
            Err(InvalidUtf8 {
                line: 2,
                column: 3,
                byte: 8
            })
        );
    }

    #[test]
    fn devices_directories_and_oversized_inputs_are_refused_pipes_are_bounded() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("f");
        std::fs::write(&file, "12345").unwrap();
        assert_eq!(read_limited(&file, 5).unwrap(), b"12345");
        assert!(matches!(
            read_limited(&file, 4),
            Err(ReadError::TooLarge { size: Some(5), .. })
        ));
        assert!(matches!(
            read_limited(dir.path(), 4),
            Err(ReadError::NotAFile("a directory"))
        ));
        // A character device is refused before a byte is read (this only reads metadata).
        assert!(matches!(
            read_limited(Path::new("/dev/zero"), 4),
            Err(ReadError::NotAFile("a character device"))
        ));
        // An endless pipe is read one byte past the limit, then refused.
        let fifo = dir.path().join("fifo");
        let status = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(status.success());
        let writer = {
            let fifo = fifo.clone();
            std::thread::spawn(move || {
                use std::io::Write as _;
                let mut pipe = std::fs::OpenOptions::new().write(true).open(fifo).unwrap();
                let chunk = [b'x'; 4096];
                // Ends when the reader closes the pipe (EPIPE).
                while pipe.write_all(&chunk).is_ok() {}
            })
        };
        let error = read_limited(&fifo, 10_000).unwrap_err();
        assert!(matches!(error, ReadError::TooLarge { size: None, .. }));
        assert_eq!(
            error.to_string(),
            "expected a file of at most 10000 bytes (10000 bytes), got more (reading stopped at the limit)"
        );
        writer.join().unwrap();
    }
}
