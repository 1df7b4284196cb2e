//! Who wrote an output: the one definition of the `producer` every JSON output carries
//! (`check.json`, `summary.json`, `matrix.json`, `coverage.json`, `tune.json`) beside its
//! own `schema_version`, and of the versions `fencesim --version` prints.
//!
//! The producer names the fencesim and madsim versions, not the commit: a committed report
//! (reports/matrix.json, reports/coverage.json, reports/tune/*/tune.json) must stay the same
//! bytes across commits that do not change it, and a trace hash depends on the simulator
//! (fencesim and madsim), which the producer names. `fencesim --version` adds the commit.

use serde::Serialize;

/// The fencesim version (every crate of the workspace shares it).
pub const FENCESIM: &str = env!("CARGO_PKG_VERSION");

/// The madsim version in the lock file this build was made from (`unknown` outside the
/// repository).
pub const MADSIM: &str = env!("FENCESIM_MADSIM");

/// `fencesim 0.1.0 (madsim 0.2.34)`: the `producer` of every JSON output.
pub const PRODUCER: &str = concat!(
    "fencesim ",
    env!("CARGO_PKG_VERSION"),
    " (madsim ",
    env!("FENCESIM_MADSIM"),
    ")"
);

/// An output with its header: `schema_version` and `producer` first, then `body`'s fields.
#[derive(Serialize)]
struct Versioned<'a, T: Serialize> {
    schema_version: u32,
    producer: &'static str,
    #[serde(flatten)]
    body: &'a T,
}

/// `body` (a struct or map) as pretty JSON with a trailing newline, its fields after
/// `"schema_version": schema_version` and `"producer":` [`PRODUCER`]. The same body always
/// gives the same bytes.
pub fn versioned_json<T: Serialize>(schema_version: u32, body: &T) -> String {
    let versioned = Versioned {
        schema_version,
        producer: PRODUCER,
        body,
    };
    let mut out = serde_json::to_string_pretty(&versioned).expect("outputs serialize");
    out.push('\n');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Serialize)]
    struct Body {
        b: u32,
        a: Option<f64>,
    }

    #[test]
    fn the_header_comes_first_then_the_bodys_fields_in_order() {
        let text = versioned_json(3, &Body { b: 1, a: Some(0.1) });
        assert_eq!(
            text,
            format!(
                "{{\n  \"schema_version\": 3,\n  \"producer\": \"{PRODUCER}\",\n  \"b\": 1,\n  \"a\": 0.1\n}}\n"
            )
        );
        assert!(PRODUCER.starts_with("fencesim ") && !PRODUCER.contains("commit"));
        assert_ne!(MADSIM, "unknown", "the build found madsim in Cargo.lock");
    }
}
