//! `check --shard auto`: the slice K/N taken from the variables the engines running N
//! parallel copies of a job already set, so a Kubernetes Indexed Job or a CI matrix needs no
//! per-copy argument.

use fencesim_verdict::Shard;

use crate::common::InputError;

/// The variables read, in order: (index variable, its base, total variable, engine).
/// `JOB_COMPLETIONS` is not set by Kubernetes itself: the manifest sets it to the Job's
/// `completions` (docs/scale-out.md).
const ENGINES: [(&str, u64, &str, &str); 5] = [
    (
        "FENCESIM_SHARD_INDEX",
        1,
        "FENCESIM_SHARD_TOTAL",
        "fencesim",
    ),
    (
        "JOB_COMPLETION_INDEX",
        0,
        "JOB_COMPLETIONS",
        "Kubernetes Indexed Job",
    ),
    ("CI_NODE_INDEX", 1, "CI_NODE_TOTAL", "GitLab CI parallel"),
    (
        "CIRCLE_NODE_INDEX",
        0,
        "CIRCLE_NODE_TOTAL",
        "CircleCI parallelism",
    ),
    (
        "BUILDKITE_PARALLEL_JOB",
        0,
        "BUILDKITE_PARALLEL_JOB_COUNT",
        "Buildkite parallelism",
    ),
];

/// `--shard TEXT`: `K/N`, or `auto` for the first engine whose index variable is set (read
/// through `var`). Returns the shard and, for `auto`, where it came from.
pub(crate) fn parse(
    text: &str,
    var: &dyn Fn(&str) -> Option<String>,
) -> Result<(Shard, Option<String>), InputError> {
    if text != "auto" {
        return Shard::parse(text)
            .map(|shard| (shard, None))
            .map_err(|expected| InputError(format!("--shard: {expected}, or `auto`")));
    }
    for (index_name, base, total_name, engine) in ENGINES {
        let Some(index) = var(index_name) else {
            continue;
        };
        let total = var(total_name).ok_or_else(|| {
            InputError(format!(
                "--shard auto: {index_name}={index} is set ({engine}) but {total_name} is not; \
                 expected it to hold the number of shards"
            ))
        })?;
        let bad = |name: &str, value: &str, what: &str| {
            InputError(format!(
                "--shard auto: {name}: expected {what}, got `{value}` ({engine})"
            ))
        };
        let index: u64 = index
            .trim()
            .parse()
            .map_err(|_| bad(index_name, &index, "a shard index"))?;
        let total_n: u64 = total
            .trim()
            .parse()
            .map_err(|_| bad(total_name, &total, "the number of shards"))?;
        let k = index
            .checked_add(1 - base)
            .ok_or_else(|| bad(index_name, &index.to_string(), "a shard index"))?;
        let shard = Shard::parse(&format!("{k}/{total_n}")).map_err(|expected| {
            InputError(format!(
                "--shard auto: {index_name}={index} {total_name}={total_n} ({engine}, {}-based): {expected}",
                base
            ))
        })?;
        return Ok((
            shard,
            Some(format!("{index_name}={index} {total_name}={total_n}")),
        ));
    }
    let names: Vec<&str> = ENGINES.iter().map(|(index, ..)| *index).collect();
    Err(InputError(format!(
        "--shard auto: none of {} is set; expected one (or --shard K/N)",
        names.join(", ")
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shard(text: &str, pairs: &[(&str, &str)]) -> Result<(Shard, Option<String>), InputError> {
        let pairs: Vec<(String, String)> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        parse(text, &move |name| {
            pairs
                .iter()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v.clone())
        })
    }

    #[test]
    fn each_engines_variables_give_the_same_slice() {
        let third_of_four = Shard { k: 3, n: 4 };
        for pairs in [
            [("FENCESIM_SHARD_INDEX", "3"), ("FENCESIM_SHARD_TOTAL", "4")],
            [("JOB_COMPLETION_INDEX", "2"), ("JOB_COMPLETIONS", "4")],
            [("CI_NODE_INDEX", "3"), ("CI_NODE_TOTAL", "4")],
            [("CIRCLE_NODE_INDEX", "2"), ("CIRCLE_NODE_TOTAL", "4")],
            [
                ("BUILDKITE_PARALLEL_JOB", "2"),
                ("BUILDKITE_PARALLEL_JOB_COUNT", "4"),
            ],
        ] {
            let (got, source) = shard("auto", &pairs).unwrap();
            assert_eq!(got, third_of_four, "{pairs:?}");
            assert!(source.unwrap().contains(pairs[0].0));
        }
        // An explicit K/N ignores the environment.
        let (got, source) = shard("1/2", &[("JOB_COMPLETION_INDEX", "2")]).unwrap();
        assert_eq!((got, source), (Shard { k: 1, n: 2 }, None));
    }

    #[test]
    fn missing_or_out_of_range_variables_are_errors_naming_them() {
        let error = |text: &str, pairs: &[(&str, &str)]| shard(text, pairs).unwrap_err().0;
        assert!(error("auto", &[]).contains("JOB_COMPLETION_INDEX"));
        assert!(error("auto", &[("JOB_COMPLETION_INDEX", "0")]).contains("JOB_COMPLETIONS"));
        // Index 4 of 4 with a 0-based index is past the end.
        let past = error(
            "auto",
            &[("JOB_COMPLETION_INDEX", "4"), ("JOB_COMPLETIONS", "4")],
        );
        assert!(past.contains("0-based"), "{past}");
        assert!(
            error("auto", &[("CI_NODE_INDEX", "0"), ("CI_NODE_TOTAL", "2")]).contains("1-based")
        );
        assert!(
            error("auto", &[("CI_NODE_INDEX", "x"), ("CI_NODE_TOTAL", "2")])
                .contains("CI_NODE_INDEX")
        );
        assert!(error("0/2", &[]).contains("--shard"));
    }
}
