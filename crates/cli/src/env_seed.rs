//! The seed variables a user may have exported for a library test (`FENCESIM_SEED`,
//! `FENCESIM_SEEDS`, printed by the library's failure message) or for madsim
//! (`MADSIM_TEST_SEED`; a fencesim seed is the madsim runtime's seed): `run` and `replay`
//! honour them and say so, `check` and `soak` refuse them. None is ever ignored silently.

use fencesim_scenario::SeedRange;

use crate::common::InputError;

/// Seeds named by the environment, and the variable that named them (`FENCESIM_SEED=3`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct EnvSeeds {
    pub(crate) seeds: SeedRange,
    pub(crate) source: String,
}

/// The seed variables that are set, as `NAME=VALUE`.
fn set_variables(var: &dyn Fn(&str) -> Option<String>) -> Vec<String> {
    ["FENCESIM_SEED", "FENCESIM_SEEDS", "MADSIM_TEST_SEED"]
        .into_iter()
        .filter_map(|name| var(name).map(|value| format!("{name}={value}")))
        .collect()
}

/// What the seed variables read through `var` say (`None`: none is set). Malformed values,
/// or two variables naming different seeds, are errors naming the variables.
pub(crate) fn from_env(
    var: &dyn Fn(&str) -> Option<String>,
) -> Result<Option<EnvSeeds>, InputError> {
    // The library's parser (FENCESIM_SEED / FENCESIM_SEEDS / MADSIM_TEST_SEED); FENCESIM_JOBS is the library's
    // alone (the command line has --jobs), so it is hidden from it here.
    let fencesim = fencesim::EnvSeeds::from_env(&|name| {
        (name != "FENCESIM_JOBS").then(|| var(name)).flatten()
    })
    .map_err(|e| InputError(e.to_string()))?;
    let source = set_variables(var).join(" ");
    Ok(fencesim.seeds.map(|seeds| EnvSeeds { seeds, source }))
}

/// The environment's seeds from the process environment.
pub(crate) fn from_process() -> Result<Option<EnvSeeds>, InputError> {
    from_env(&var)
}

/// A variable of the process environment. A value that is not UTF-8 is passed on (lossily, so
/// the parser refuses it by name), never taken for an unset variable: an unset seed or shard
/// variable means every seed.
pub(crate) fn var(name: &str) -> Option<String> {
    std::env::var_os(name).map(|raw| raw.to_string_lossy().into_owned())
}

/// `run`'s seeds: `--seeds`, or the environment's, or the scenario's; both given is an error
/// unless they agree.
pub(crate) fn run_seeds(
    flag: Option<SeedRange>,
    env: Option<EnvSeeds>,
    scenario: SeedRange,
) -> Result<(SeedRange, Option<String>), InputError> {
    match (flag, env) {
        (Some(flag), Some(env)) if flag != env.seeds => Err(InputError(format!(
            "--seeds {flag} and {} name different seeds; expected one of them",
            env.source
        ))),
        (Some(flag), _) => Ok((flag, None)),
        (None, Some(env)) => Ok((env.seeds, Some(env.source))),
        (None, None) => Ok((scenario, None)),
    }
}

/// `replay`'s seed: `--seed`, or the environment's one seed; neither, a range, or two
/// different seeds is an error.
pub(crate) fn replay_seed(
    flag: Option<u64>,
    env: Option<EnvSeeds>,
) -> Result<(u64, Option<String>), InputError> {
    let env_seed = match &env {
        None => None,
        Some(env) if env.seeds.len() == 1 => Some(env.seeds.start),
        Some(env) => {
            return Err(InputError(format!(
                "{}: replay takes one seed; expected FENCESIM_SEED=N (or --seed N)",
                env.source
            )))
        }
    };
    match (flag, env_seed, env) {
        (Some(flag), Some(seed), Some(env)) if flag != seed => Err(InputError(format!(
            "--seed {flag} and {} name different seeds; expected one of them",
            env.source
        ))),
        (Some(flag), _, _) => Ok((flag, None)),
        (None, Some(seed), Some(env)) => Ok((seed, Some(env.source))),
        _ => Err(InputError(
            "--seed: expected the seed to replay (`--seed N`, or FENCESIM_SEED=N in the environment)"
                .into(),
        )),
    }
}

/// `check` runs every scenario over its own range: a seed variable in its environment is
/// refused, not ignored.
pub(crate) fn refuse_for_check(env: Option<EnvSeeds>) -> Result<(), InputError> {
    match env {
        None => Ok(()),
        Some(env) => Err(InputError(format!(
            "{} is set, but `check` runs every scenario over its own seed range: unset it, or \
             run one scenario's seeds with `fencesim run FILE --seeds A..B` or one seed with \
             `fencesim replay FILE --seed N`",
            env.source
        ))),
    }
}

/// `soak` runs consecutive seeds from `--base-seed`: a seed variable in its environment is
/// refused, not ignored (a nightly job that exported one would otherwise think it was used).
pub(crate) fn refuse_for_soak(env: Option<EnvSeeds>) -> Result<(), InputError> {
    match env {
        None => Ok(()),
        Some(env) => Err(InputError(format!(
            "{} is set, but `soak` runs consecutive seeds from --base-seed: unset it, and give \
             the first seed as `--base-seed N`",
            env.source
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &[(&str, &str)]) -> Result<Option<EnvSeeds>, InputError> {
        let pairs: Vec<(String, String)> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        from_env(&move |name| {
            pairs
                .iter()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v.clone())
        })
    }

    fn range(start: u64, end: u64) -> SeedRange {
        SeedRange { start, end }
    }

    #[test]
    fn each_variable_names_seeds_and_is_named_back() {
        assert_eq!(env(&[]).unwrap(), None);
        let one = env(&[("FENCESIM_SEED", "7")]).unwrap().unwrap();
        assert_eq!(
            (one.seeds, one.source.as_str()),
            (range(7, 8), "FENCESIM_SEED=7")
        );
        let many = env(&[("FENCESIM_SEEDS", "3..9")]).unwrap().unwrap();
        assert_eq!(many.seeds, range(3, 9));
        let madsim = env(&[("MADSIM_TEST_SEED", "11")]).unwrap().unwrap();
        assert_eq!(
            (madsim.seeds, madsim.source.as_str()),
            (range(11, 12), "MADSIM_TEST_SEED=11")
        );
        // The same seed twice is fine; different seeds, or malformed values, are errors.
        assert!(env(&[("FENCESIM_SEED", "4"), ("MADSIM_TEST_SEED", "4")]).is_ok());
        let different = env(&[("FENCESIM_SEED", "4"), ("MADSIM_TEST_SEED", "5")]).unwrap_err();
        assert!(different.0.contains("different seeds"), "{}", different.0);
        assert!(env(&[("MADSIM_TEST_SEED", "x")])
            .unwrap_err()
            .0
            .contains("MADSIM_TEST_SEED"));
        assert!(env(&[("FENCESIM_SEED", "x")])
            .unwrap_err()
            .0
            .contains("FENCESIM_SEED"));
        // FENCESIM_JOBS is the library's; the command line neither reads nor rejects it.
        assert_eq!(env(&[("FENCESIM_JOBS", "many")]).unwrap(), None);
    }

    #[test]
    fn run_takes_the_flag_or_the_environment_and_refuses_a_contradiction() {
        let scenario = range(0, 100);
        let seven = || env(&[("FENCESIM_SEED", "7")]).unwrap();
        assert_eq!(run_seeds(None, None, scenario).unwrap(), (scenario, None));
        assert_eq!(
            run_seeds(None, seven(), scenario).unwrap(),
            (range(7, 8), Some("FENCESIM_SEED=7".to_string()))
        );
        assert_eq!(
            run_seeds(Some(range(7, 8)), seven(), scenario).unwrap().0,
            range(7, 8)
        );
        assert!(run_seeds(Some(range(0, 8)), seven(), scenario).is_err());
    }

    #[test]
    fn replay_takes_one_seed_from_the_flag_or_the_environment() {
        let seven = || env(&[("FENCESIM_SEED", "7")]).unwrap();
        assert_eq!(replay_seed(Some(3), None).unwrap(), (3, None));
        assert_eq!(replay_seed(None, seven()).unwrap().0, 7);
        assert_eq!(replay_seed(Some(7), seven()).unwrap().0, 7);
        assert!(replay_seed(Some(3), seven()).is_err());
        assert!(replay_seed(None, None).unwrap_err().0.contains("--seed"));
        let range = env(&[("FENCESIM_SEEDS", "0..5")]).unwrap();
        assert!(replay_seed(None, range).unwrap_err().0.contains("one seed"));
    }

    #[test]
    fn check_refuses_every_seed_variable() {
        assert!(refuse_for_check(None).is_ok());
        for (name, value) in [
            ("FENCESIM_SEED", "1"),
            ("FENCESIM_SEEDS", "0..2"),
            ("MADSIM_TEST_SEED", "1"),
        ] {
            let error = refuse_for_check(env(&[(name, value)]).unwrap()).unwrap_err();
            assert!(error.0.contains(name), "{}", error.0);
        }
    }
}
