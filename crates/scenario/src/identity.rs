//! Run identities: a run is `(scenario file, --set overrides in order, seed)`, and the one
//! command line that reproduces it. Every place that prints how to replay a seed (run,
//! check, JUnit, shrink, explore, the library) builds it here, so the lines agree.

/// `fencesim replay <file> --seed <seed>`, the file quoted for a POSIX shell when needed.
pub fn replay_command(file: &str, seed: u64) -> String {
    replay_command_with(file, seed, &[])
}

/// `fencesim replay <file> --seed <seed> --set FIELD=VALUE…`: the line that replays `seed` of
/// a scenario loaded with the `--set` overrides `overrides` (each `FIELD=VALUE`, in the order
/// they were applied), every word quoted for a POSIX shell when needed. Without the
/// overrides the line would replay a different scenario.
pub fn replay_command_with(file: &str, seed: u64, overrides: &[String]) -> String {
    let mut line = format!("fencesim replay {} --seed {seed}", shell_word(file));
    for set in overrides {
        line.push_str(" --set ");
        line.push_str(&shell_word(set));
    }
    line
}

/// `word` as one POSIX shell word: as it is when it holds only characters no shell treats
/// specially, else in single quotes.
pub fn shell_word(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./:=+,@%".contains(c));
    if plain {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replay_commands_quote_only_when_needed() {
        let check = |file: &str, expect: &str| assert_eq!(replay_command(file, 7), expect);
        check(
            "scenarios/a-b_c.toml",
            "fencesim replay scenarios/a-b_c.toml --seed 7",
        );
        check("a b.toml", "fencesim replay 'a b.toml' --seed 7");
        check("$x;.toml", "fencesim replay '$x;.toml' --seed 7");
        check("", "fencesim replay '' --seed 7");
        assert_eq!(
            replay_command_with("a.toml", 1, &["lease.ttl_ms=2000".into(), "x=it's".into()]),
            r"fencesim replay a.toml --seed 1 --set lease.ttl_ms=2000 --set 'x=it'\''s'"
        );
    }
}
