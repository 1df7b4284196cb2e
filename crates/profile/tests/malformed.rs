//! Malformed input, for every source: truncated lines, other formats, an empty file, binary
//! junk, a file that never ends (`/dev/zero`), a FIFO. Each is either read with its unusable
//! lines counted (and the first few shown with line numbers) or refused (exit 2 in the CLI);
//! none panics, and no read is unbounded.

use std::io::Cursor;

use fencesim_profile::{
    input::{self, Line},
    GcOptions, InputError, Measures, OutageTarget, Profile,
};

const JVM: &str = "\
[0.005s][info][gc] Using G1
[0.433s][info][gc,start    ] GC(0) Pause Young (Normal) (G1 Evacuation Pause)
[0.435s][info][gc          ] GC(0) Pause Young (Normal) (G1 Evacuation Pause) 12M->1M(256M) 1.354ms
[1.314s][info][gc          ] GC(1) Pause Young (Normal) (G1 Evacuation Pause) 27M->4M(256M) 5.300ms
[7.079s][info][gc          ] GC(6) Pause Full (System.gc()) 55M->36M(127M) 10.078ms
[9.000s][info][gc          ] GC(7) Pause Young (Normal) (G1 Evacuation Pause) 27M->4M(256M) 2.5ms
";

const GO: &str = "\
gc 1 @0.012s 2%: 0.011+1.2+0.003 ms clock, 0.044+0.5/1.0/0.2+0.012 ms cpu, 4->4->0 MB, 4 MB goal, 0 MB stacks, 0 MB globals, 4 P
gc 2 @0.500s 2%: 0.020+2.0+0.010 ms clock, 0.08+0.1/1.0/0.2+0.04 ms cpu, 4->5->1 MB, 5 MB goal, 0 MB stacks, 0 MB globals, 4 P (forced)
";

const PROMETHEUS: &str = "\
# HELP lease_request_duration_seconds Lease requests.
# TYPE lease_request_duration_seconds histogram
lease_request_duration_seconds_bucket{le=\"0.001\"} 10
lease_request_duration_seconds_bucket{le=\"0.01\"} 90
lease_request_duration_seconds_bucket{le=\"0.1\"} 99
lease_request_duration_seconds_bucket{le=\"+Inf\"} 100
lease_request_duration_seconds_sum 0.9
lease_request_duration_seconds_count 100
";

const CSV: &str = "\
start,end,what
2024-03-01T12:00:00Z,2024-03-01T12:00:30Z,etcd leader election
2024-03-02T08:00:00Z,2024-03-02T08:05:00Z,etcd disk stall
";

#[derive(Clone, Copy, Debug)]
enum Source {
    Jvm,
    Go,
    Prometheus,
    Outages,
}

const SOURCES: [Source; 4] = [Source::Jvm, Source::Go, Source::Prometheus, Source::Outages];

fn profile(source: Source, bytes: &[u8], max: u64) -> Result<Profile, InputError> {
    let reader = Cursor::new(bytes.to_vec());
    let gc = GcOptions { workers: 1 };
    match source {
        Source::Jvm => fencesim_profile::jvm_gc(reader, "case", max, gc),
        Source::Go => fencesim_profile::go_gc(reader, "case", max, gc),
        Source::Prometheus => {
            fencesim_profile::prometheus(reader, "case", max, None, &[], None, Measures::OneWay)
        }
        Source::Outages => {
            fencesim_profile::outages(reader, "case", max, OutageTarget::Service, None)
        }
    }
}

fn good(source: Source) -> &'static str {
    match source {
        Source::Jvm => JVM,
        Source::Go => GO,
        Source::Prometheus => PROMETHEUS,
        Source::Outages => CSV,
    }
}

/// Deterministic junk bytes (a xorshift stream).
fn junk(len: usize) -> Vec<u8> {
    let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
    (0..len)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state as u8
        })
        .collect()
}

/// What a case must give.
enum Expect {
    /// Refused, the message containing this.
    Refused(&'static str),
    /// Read: this many unusable lines, the first shown at this line number.
    Counted { unusable: usize, first_line: usize },
}

#[test]
fn every_source_on_every_malformed_input() {
    let long_line = format!("{}\n", "x".repeat(70_000));
    let inputs: Vec<(&str, Vec<u8>)> = vec![
        ("empty file", Vec::new()),
        ("only blank lines", b"\n\n  \n".to_vec()),
        ("binary junk", junk(10_000)),
        ("a line longer than 64 KiB", long_line.clone().into_bytes()),
        ("a JDK 8 style GC log", b"2024-03-01T12:00:00.000+0000: 0.123: [GC (Allocation Failure) [PSYoungGen: 33280K->5104K(38400K)] 33280K->5112K(125952K), 0.0051234 secs]\n".to_vec()),
        ("a JSON document", b"{\"pauses\": [1, 2, 3]}\n".to_vec()),
    ];
    for source in SOURCES {
        for (what, bytes) in &inputs {
            match profile(source, bytes, 1 << 20) {
                Ok(profile) => panic!("{source:?} on {what}: accepted {:?}", profile.heading),
                Err(error) => {
                    let shown = error.to_string();
                    assert!(
                        shown.starts_with("case: expected"),
                        "{source:?} on {what}: {shown}"
                    );
                }
            }
        }
        // Another source's valid file is another format: nothing usable, every line counted.
        for other in SOURCES {
            if std::mem::discriminant(&other) == std::mem::discriminant(&source) {
                continue;
            }
            if let Ok(profile) = profile(source, good(other).as_bytes(), 1 << 20) {
                panic!(
                    "{source:?} accepted the {other:?} fixture: {}",
                    profile.heading
                );
            }
        }
    }
}

#[test]
fn unusable_lines_are_counted_and_shown_with_their_numbers() {
    let jvm_cut = format!("{JVM}[9.500s][info][gc          ] GC(8) Pause Young (Normal) (G1 Evacuation Pause) 27M->4M(2");
    let go_cut = format!("{GO}gc 3 @0.900s 2%: 0.011+1.2+0.0");
    let csv_bad = format!("{CSV}2024-03-03T00:00:00Z,2024-03-02T00:00:00Z\n2024-03-03 10:00:00,2024-03-03 10:01:00\nnot,a,time\n");
    let prometheus_bad =
        format!("{PROMETHEUS}lease_request_duration_seconds_bucket{{le=\"0.5\" 100\n???\n");
    let junk_lines = format!("{JVM}{}\nhello\n\u{0}\u{1}\u{2}\n", "\u{7f}".repeat(10));
    let cases: Vec<(Source, String, Expect)> = vec![
        (Source::Jvm, JVM.to_string(), Expect::Counted { unusable: 0, first_line: 0 }),
        (Source::Jvm, jvm_cut, Expect::Counted { unusable: 1, first_line: 7 }),
        (Source::Jvm, junk_lines, Expect::Counted { unusable: 3, first_line: 7 }),
        (Source::Jvm, format!("hello\n{JVM}"), Expect::Counted { unusable: 1, first_line: 1 }),
        (Source::Go, go_cut, Expect::Counted { unusable: 1, first_line: 3 }),
        (Source::Go, format!("{GO}allocated 5 bytes\n"), Expect::Counted { unusable: 1, first_line: 3 }),
        (Source::Outages, csv_bad, Expect::Counted { unusable: 3, first_line: 4 }),
        (Source::Prometheus, prometheus_bad, Expect::Counted { unusable: 2, first_line: 9 }),
        (
            Source::Jvm,
            "[0.1s][info][gc] GC(0) Pause Young (Normal) (G1 Evacuation Pause) 1M->1M(2M) 1.0ms\n".into(),
            Expect::Refused("found lines over no span of time"),
        ),
        (
            Source::Prometheus,
            "x_seconds_bucket{le=\"0.1\"} 5\nx_seconds_bucket{le=\"0.2\"} 4\nx_seconds_bucket{le=\"+Inf\"} 5\n".into(),
            Expect::Refused("must not decrease"),
        ),
        (
            Source::Prometheus,
            "x_seconds_bucket{le=\"0.1\"} 5\n".into(),
            Expect::Refused("no le=\"+Inf\" bucket"),
        ),
        (
            Source::Prometheus,
            "x_bytes_bucket{le=\"0.1\"} 5\nx_bytes_bucket{le=\"+Inf\"} 5\n".into(),
            Expect::Refused("pass --unit"),
        ),
        (
            Source::Prometheus,
            format!("{PROMETHEUS}{}", PROMETHEUS.replace("lease_request", "other")),
            Expect::Refused("choose one with --metric"),
        ),
    ];
    for (source, text, expect) in cases {
        let result = profile(source, text.as_bytes(), 1 << 20);
        match (result, expect) {
            (
                Ok(profile),
                Expect::Counted {
                    unusable,
                    first_line,
                },
            ) => {
                let report = &profile.report;
                assert_eq!(
                    report.unusable,
                    unusable,
                    "{source:?}: {}",
                    report.describe("case")
                );
                assert_eq!(
                    report.used + report.skipped + report.unusable,
                    report.lines,
                    "every line accounted for"
                );
                if unusable > 0 {
                    assert_eq!(report.first_unusable[0].line, first_line);
                    let shown = report.describe("case");
                    assert!(shown.contains(&format!("case:{first_line}: ")), "{shown}");
                }
            }
            (Err(error), Expect::Refused(expected)) => {
                assert!(error.expected.contains(expected), "{source:?}: {error}");
            }
            (Ok(profile), Expect::Refused(expected)) => {
                panic!(
                    "{source:?}: accepted ({}), expected {expected:?}",
                    profile.heading
                )
            }
            (Err(error), Expect::Counted { .. }) => panic!("{source:?}: refused: {error}"),
        }
    }
}

#[test]
fn only_the_first_few_unusable_lines_are_kept() {
    let text = format!("{JVM}{}", "junk\n".repeat(1_000));
    let profile = profile(Source::Jvm, text.as_bytes(), 1 << 20).unwrap();
    assert_eq!(profile.report.unusable, 1_000);
    assert_eq!(profile.report.first_unusable.len(), input::SHOWN_LINES);
    assert!(profile
        .report
        .describe("case")
        .contains("... and 995 more unusable lines"));
}

#[test]
fn reads_are_bounded() {
    // /dev/zero never ends: the read stops one byte past the limit.
    for source in SOURCES {
        let zero = std::fs::File::open("/dev/zero").unwrap();
        let gc = GcOptions { workers: 1 };
        let max = 4 << 20;
        let result = match source {
            Source::Jvm => fencesim_profile::jvm_gc(zero, "/dev/zero", max, gc),
            Source::Go => fencesim_profile::go_gc(zero, "/dev/zero", max, gc),
            Source::Prometheus => fencesim_profile::prometheus(
                zero,
                "/dev/zero",
                max,
                None,
                &[],
                None,
                Measures::OneWay,
            ),
            Source::Outages => {
                fencesim_profile::outages(zero, "/dev/zero", max, OutageTarget::Link, None)
            }
        };
        let error = result.expect_err("refused");
        assert!(
            error.expected.contains("expected at most 4194304 bytes"),
            "{error}"
        );
    }
    // A valid file over the limit is refused too, not half-read.
    let error = profile(Source::Jvm, JVM.as_bytes(), 100).unwrap_err();
    assert!(error.expected.contains("at most 100 bytes"), "{error}");
    // Exactly at the limit is read.
    assert!(profile(Source::Jvm, JVM.as_bytes(), JVM.len() as u64).is_ok());
}

#[test]
fn devices_fifos_and_directories_are_refused_before_reading() {
    let dir = std::env::temp_dir().join(format!("fencesim-profile-fifo-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let fifo = dir.join("fifo");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    for (path, expected) in [
        (
            std::path::PathBuf::from("/dev/zero"),
            "a device, FIFO or socket",
        ),
        (fifo.clone(), "a device, FIFO or socket"),
        (dir.clone(), "a directory"),
        (dir.join("missing.log"), "expected a readable file"),
    ] {
        let error = input::open(&path).expect_err("refused");
        assert!(
            error.expected.contains(expected),
            "{}: {error}",
            path.display()
        );
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn lines_are_split_without_losing_any() {
    let mut seen = Vec::new();
    let text = "a\r\nb\n\nc";
    input::for_each_line(text.as_bytes(), "case", 100, |number, line| {
        let text = match line {
            Line::Text(text) => text.to_string(),
            Line::Unreadable(reason) => reason.to_string(),
        };
        seen.push((number, text));
    })
    .unwrap();
    let expected: Vec<(usize, String)> = vec![
        (1, "a".into()),
        (2, "b".into()),
        (3, "".into()),
        (4, "c".into()),
    ];
    assert_eq!(seen, expected);
}

/// Every time decorator a JVM writes (`uptime` in seconds, `uptimemillis`, `uptimenanos`,
/// `time`/`utctime`) gives the same span and rate for the same log: three pauses at 0, 30
/// and 60 s are 3 a minute over 60 s, whichever unit the decoration is in.
#[test]
fn every_time_decorator_gives_the_same_span_and_rate() {
    type Decorate = fn(u64) -> String;
    let decorators: [(&str, Decorate); 4] = [
        ("uptime", |s| format!("{s}.000s")),
        ("uptimemillis", |s| format!("{}ms", s * 1_000)),
        ("uptimenanos", |s| format!("{}ns", s * 1_000_000_000)),
        ("utctime", |s| {
            format!("2024-03-01T12:{:02}:{:02}.000+0000", s / 60, s % 60)
        }),
    ];
    for (name, decorate) in decorators {
        let log: String = [0u64, 30, 60]
            .iter()
            .enumerate()
            .map(|(i, &s)| {
                format!(
                    "[{}][info][gc] GC({i}) Pause Young (Normal) (G1 Evacuation Pause) 4M->1M(8M) 2.000ms\n",
                    decorate(s)
                )
            })
            .collect();
        let profile =
            profile(Source::Jvm, log.as_bytes(), 1 << 20).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(
            profile.heading.contains("over 60.0 s"),
            "{name}: {}",
            profile.heading
        );
        assert_eq!(profile.blocks[0].rate_per_min_each(), Some(3.0), "{name}");
    }
}
