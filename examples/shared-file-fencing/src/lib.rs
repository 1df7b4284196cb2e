//! The seeds' exercise: "design the fencing check for a resource that's a simple text file on
//! a shared filesystem (no database, no built-in version column)".
//!
//! The answer here: keep the highest token accepted in a file beside the data
//! (`job-1.txt.fence`), and compare the presented token with it on every write. Two variants:
//!
//! - [`SharedFile::atomic`] — compare and write in one step: the writer takes an exclusive
//!   lock on the fence file (`flock`), reads it, rejects a token below it, appends the data and
//!   writes the new token, then unlocks. In the simulation the store's `write` is that one
//!   locked step.
//! - [`SharedFile::two_step`] — the subtle bug: the writer reads the fence file, compares in
//!   its own memory, and later, in a second step, appends the data and overwrites the fence
//!   file without the lock. A writer paused between the two steps (a GC pause during its work)
//!   writes over a newer holder's data *and moves the fence file back* to its older token.
//!
//! The filesystem is shared storage: its files survive a restart of the storage process.

use std::collections::BTreeMap;

use fencesim::{ClientProtocol, Fence, FenceVerdict, LeaseView, Token, WriteRequest};

/// A directory on a shared filesystem: file name → contents.
#[derive(Clone, Debug, Default)]
pub struct SharedDir {
    files: BTreeMap<String, String>,
}

impl SharedDir {
    fn read(&self, name: &str) -> Option<&str> {
        self.files.get(name).map(String::as_str)
    }

    fn write(&mut self, name: &str, contents: String) {
        self.files.insert(name.to_string(), contents);
    }

    fn append(&mut self, name: &str, line: &str) {
        let file = self.files.entry(name.to_string()).or_default();
        file.push_str(line);
        file.push('\n');
    }

    /// The token in `<resource>.txt.fence`, if the file exists.
    fn fence_token(&self, resource: &str) -> Option<Token> {
        self.read(&fence_file(resource))
            .map(|text| text.trim().parse().expect("the fence file holds a token"))
    }
}

fn data_file(resource: &str) -> String {
    format!("{resource}.txt")
}

fn fence_file(resource: &str) -> String {
    format!("{resource}.txt.fence")
}

/// A text file fenced by a token kept beside it.
#[derive(Clone, Debug)]
pub struct SharedFile {
    dir: SharedDir,
    atomic: bool,
}

impl SharedFile {
    /// Compare and write under one lock: correct.
    pub fn atomic() -> SharedFile {
        SharedFile {
            dir: SharedDir::default(),
            atomic: true,
        }
    }

    /// Read the fence file, compare, then write in a second step: subtly broken.
    pub fn two_step() -> SharedFile {
        SharedFile {
            dir: SharedDir::default(),
            atomic: false,
        }
    }

    /// The data file's contents (for tests).
    pub fn data(&self, resource: &str) -> Option<&str> {
        self.dir.read(&data_file(resource))
    }
}

impl Fence for SharedFile {
    fn name(&self) -> String {
        if self.atomic {
            "shared-file-atomic".into()
        } else {
            "shared-file-two-step".into()
        }
    }

    /// The two-step writer reads the fence file in its own round trip and compares locally
    /// (fencesim's read-then-write protocol); the atomic one sends the write with its token.
    fn protocol(&self) -> ClientProtocol {
        if self.atomic {
            ClientProtocol::Direct
        } else {
            ClientProtocol::ReadThenWrite
        }
    }

    fn write(&mut self, request: &WriteRequest, _: Option<&dyn LeaseView>) -> FenceVerdict {
        let stored = self.dir.fence_token(&request.resource);
        if self.atomic {
            // flock(fence); read; compare; append; write token; unlock — one step.
            if let Some(stored) = stored.filter(|&stored| request.token < stored) {
                return FenceVerdict::Rejected {
                    accepted: Some(stored),
                    reason: format!(
                        "token {} below {stored} in {}",
                        request.token,
                        fence_file(&request.resource)
                    ),
                };
            }
        }
        // The second step of the two-step writer: no compare here, its compare was earlier.
        self.dir.append(
            &data_file(&request.resource),
            &format!(
                "op {} by {} token {}",
                request.op, request.writer, request.token
            ),
        );
        self.dir
            .write(&fence_file(&request.resource), request.token.to_string());
        FenceVerdict::Accepted { previous: stored }
    }

    /// What the two-step writer's first step reads.
    fn read_token(&mut self, resource: &str) -> Option<Token> {
        self.dir.fence_token(resource)
    }

    /// Files on a shared filesystem survive the storage process.
    fn restart(&mut self) {}
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(store: &mut SharedFile, op: u64, token: Token) -> bool {
        let request = WriteRequest {
            op,
            resource: "job-1".into(),
            lease_scope: "job-1".into(),
            writer: format!("w{token}"),
            token,
            payload: String::new(),
        };
        store.write(&request, None).is_accepted()
    }

    #[test]
    fn the_atomic_file_rejects_a_lower_token_and_keeps_the_fence() {
        let mut store = SharedFile::atomic();
        assert!(write(&mut store, 1, 41));
        assert!(write(&mut store, 2, 42));
        assert!(!write(&mut store, 3, 41));
        assert!(write(&mut store, 4, 42), "the current holder writes again");
        assert_eq!(store.read_token("job-1"), Some(42));
        assert_eq!(store.data("job-1").unwrap().lines().count(), 3);
    }

    #[test]
    fn the_two_step_file_trusts_its_writer_and_the_fence_goes_back() {
        let mut store = SharedFile::two_step();
        assert!(write(&mut store, 1, 42));
        assert!(write(&mut store, 2, 41), "the second step does not compare");
        assert_eq!(store.read_token("job-1"), Some(41));
    }
}
