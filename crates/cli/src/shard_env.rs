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
    let mut found: Vec<(Shard, String)> = Vec::new();
    for (index_name, base, total_name, engine) in ENGINES {
        let Some(index) = var(index_name) else {
            continue;
        };
        let (shard, source) = engine_shard(var, (index_name, base, total_name, engine), &index)?;
        if let Some((first, first_source)) = found.first() {
            if *first != shard {
                return Err(InputError(format!(
                    "--shard auto: {first_source} names shard {first}, {source} names {shard}; \
                     expected the engines' variables to agree (unset one, or give --shard K/N)"
                )));
            }
        }
        found.push((shard, source));
    }
    if let Some((shard, source)) = found.into_iter().next() {
        return Ok((shard, Some(source)));
    }
    let names: Vec<&str> = ENGINES.iter().map(|(index, ..)| *index).collect();
    Err(InputError(format!(
        "--shard auto: none of {} is set; expected one (or --shard K/N)",
        names.join(", ")
    )))
}

/// The shard one engine's variables name: its index (of `base`) and total, digits only.
fn engine_shard(
    var: &dyn Fn(&str) -> Option<String>,
    (index_name, base, total_name, engine): (&str, u64, &str, &str),
    index: &str,
) -> Result<(Shard, String), InputError> {
    let total = var(total_name).ok_or_else(|| {
        InputError(format!(
            "--shard auto: {index_name}={index} is set ({engine}) but {total_name} is not; \
             expected it to hold the number of shards"
        ))
    })?;
    let number = |name: &str, value: &str, what: &str| {
        (!value.is_empty() && value.bytes().all(|b| b.is_ascii_digit()))
            .then(|| value.parse::<u64>().ok())
            .flatten()
            .ok_or_else(|| {
                InputError(format!(
                    "--shard auto: {name}: expected {what} (digits only), got `{value}` ({engine})"
                ))
            })
    };
    let index = number(index_name, index, "a shard index")?;
    let total_n = number(total_name, &total, "the number of shards")?;
    let k = index.checked_add(1 - base).ok_or_else(|| {
        InputError(format!(
            "--shard auto: {index_name}: expected a shard index, got `{index}` ({engine})"
        ))
    })?;
    let shard = Shard::parse(&format!("{k}/{total_n}")).map_err(|expected| {
        InputError(format!(
            "--shard auto: {index_name}={index} {total_name}={total_n} ({engine}, {base}-based): {expected}"
        ))
    })?;
    Ok((
        shard,
        format!("{index_name}={index} {total_name}={total_n}"),
    ))
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

    #[test]
    fn engines_that_disagree_and_numbers_with_a_sign_or_space_are_refused() {
        let error = |text: &str, pairs: &[(&str, &str)]| shard(text, pairs).unwrap_err().0;
        let both = [
            ("JOB_COMPLETION_INDEX", "0"),
            ("JOB_COMPLETIONS", "2"),
            ("CI_NODE_INDEX", "2"),
            ("CI_NODE_TOTAL", "2"),
        ];
        let disagree = error("auto", &both);
        assert!(
            disagree.contains("JOB_COMPLETION_INDEX=0") && disagree.contains("CI_NODE_INDEX=2"),
            "{disagree}"
        );
        // Two engines naming the same slice agree.
        let (got, _) = shard(
            "auto",
            &[
                ("JOB_COMPLETION_INDEX", "1"),
                ("JOB_COMPLETIONS", "2"),
                ("CI_NODE_INDEX", "2"),
                ("CI_NODE_TOTAL", "2"),
            ],
        )
        .unwrap();
        assert_eq!(got, Shard { k: 2, n: 2 });
        for bad in ["+1", " 1", "1 ", ""] {
            let text = error("auto", &[("CI_NODE_INDEX", bad), ("CI_NODE_TOTAL", "2")]);
            assert!(text.contains("digits only"), "{bad:?}: {text}");
            let text = error(&format!("{bad}/2"), &[]);
            assert!(text.contains("--shard"), "{bad:?}: {text}");
        }
    }
}
