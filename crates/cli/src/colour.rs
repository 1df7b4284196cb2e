//! Colour of the verdict labels (`check`'s and `merge`'s table, `run`'s expectation line,
//! the interrupted `check`'s table): decided once, in [`use_colour`], from `--color` and the
//! `NO_COLOR` variable (no-color.org), and kept for the process. Piped output is plain unless
//! `--color always`: CI logs and tests read the same bytes as before colour existed.

use std::{
    ffi::OsStr,
    io::IsTerminal,
    sync::atomic::{AtomicBool, Ordering},
};

use fencesim_verdict::ExpectationVerdict;

/// `--color auto|always|never`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum ColorChoice {
    /// Colour when stdout is a terminal and `NO_COLOR` is unset or empty.
    #[default]
    Auto,
    /// Always colour, even piped and whatever `NO_COLOR` says.
    Always,
    /// Never colour.
    Never,
}

/// Whether to colour: `always` and `never` decide alone; `auto` colours a terminal unless
/// `NO_COLOR` holds a non-empty value (no-color.org: an empty one does not count).
pub(crate) fn use_colour(
    choice: ColorChoice,
    stdout_is_terminal: bool,
    no_color: Option<&OsStr>,
) -> bool {
    match choice {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto => stdout_is_terminal && no_color.is_none_or(OsStr::is_empty),
    }
}

static ENABLED: AtomicBool = AtomicBool::new(false);

/// Decides for this process from `--color`, stdout and `NO_COLOR`.
pub(crate) fn init(choice: ColorChoice) {
    let no_color = std::env::var_os("NO_COLOR");
    ENABLED.store(
        use_colour(choice, std::io::stdout().is_terminal(), no_color.as_deref()),
        Ordering::Relaxed,
    );
}

/// Whether this process colours (after [`init`]).
pub(crate) fn enabled() -> bool {
    ENABLED.load(Ordering::Relaxed)
}

/// The SGR colour code of a verdict label: red for a failure, yellow for a pass that proves
/// nothing, green for a pass; `None` (plain) for anything else, such as a shard's `partial`.
fn code(label: &str) -> Option<&'static str> {
    match label {
        "FAILED" | "NOT MET" | "VIOLATED" => Some("31"),
        "VACUOUS" => Some("33"),
        "ok" | "PASS" | "MET" | "met" => Some("32"),
        _ => None,
    }
}

/// `label` in its colour when `on` (bold), else as it is.
pub(crate) fn paint(label: &str, on: bool) -> String {
    match code(label) {
        Some(code) if on => format!("\x1b[1;{code}m{label}\x1b[0m"),
        _ => label.to_string(),
    }
}

/// `label` left-aligned in `width` columns, coloured when `on`: the padding stays outside
/// the escape codes, so the table's columns line up in colour as in plain text.
pub(crate) fn paint_padded(label: &str, width: usize, on: bool) -> String {
    let pad = width.saturating_sub(label.chars().count());
    format!("{}{}", paint(label, on), " ".repeat(pad))
}

/// `run`'s summary with its verdict word coloured when `on`: the word after the colon of the
/// last line (`  expectation safe: MET — …`). Plain text is returned unchanged.
pub(crate) fn paint_summary(summary: &str, verdict: ExpectationVerdict, on: bool) -> String {
    if !on {
        return summary.to_string();
    }
    let (head, last) = match summary.rsplit_once('\n') {
        Some((head, last)) => (Some(head), last),
        None => (None, summary),
    };
    let word = verdict.word();
    let needle = format!(": {word} — ");
    let Some(at) = last.find(&needle) else {
        return summary.to_string();
    };
    let last = format!(
        "{}: {} — {}",
        &last[..at],
        paint(word, true),
        &last[at + needle.len()..]
    );
    match head {
        Some(head) => format!("{head}\n{last}"),
        None => last,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_truth_table() {
        let set = Some(OsStr::new("1"));
        let empty = Some(OsStr::new(""));
        // (choice, stdout a terminal, NO_COLOR) -> colour
        let table = [
            (ColorChoice::Auto, true, None, true),
            (ColorChoice::Auto, false, None, false),
            (ColorChoice::Auto, true, set, false),
            (ColorChoice::Auto, true, empty, true),
            (ColorChoice::Auto, false, empty, false),
            (ColorChoice::Always, false, None, true),
            (ColorChoice::Always, true, set, true),
            (ColorChoice::Always, false, set, true),
            (ColorChoice::Never, true, None, false),
            (ColorChoice::Never, true, empty, false),
            (ColorChoice::Never, false, None, false),
        ];
        for (choice, tty, no_color, expected) in table {
            assert_eq!(
                use_colour(choice, tty, no_color),
                expected,
                "{choice:?}, terminal {tty}, NO_COLOR {no_color:?}"
            );
        }
    }

    #[test]
    fn labels_and_their_colours() {
        assert_eq!(paint("FAILED", true), "\x1b[1;31mFAILED\x1b[0m");
        assert_eq!(paint("ok", true), "\x1b[1;32mok\x1b[0m");
        assert_eq!(paint("VACUOUS", true), "\x1b[1;33mVACUOUS\x1b[0m");
        assert_eq!(paint("partial", true), "partial");
        for label in ["FAILED", "ok", "VACUOUS", "partial"] {
            assert_eq!(paint(label, false), label);
        }
    }

    #[test]
    fn padding_stays_outside_the_colour() {
        assert_eq!(paint_padded("ok", 8, false), format!("{:<8}", "ok"));
        assert_eq!(paint_padded("ok", 8, true), "\x1b[1;32mok\x1b[0m      ");
        assert_eq!(paint_padded("VACUOUS!", 3, false), "VACUOUS!");
    }

    #[test]
    fn the_summary_verdict_word_is_coloured_and_nothing_else() {
        let text = "s: 2 runs, 1 failing seeds [0]\n  seeds violating: I4=1\n  expectation safe: NOT MET — I4 violated: NOT MET here stays";
        assert_eq!(paint_summary(text, ExpectationVerdict::NotMet, false), text);
        let painted = paint_summary(text, ExpectationVerdict::NotMet, true);
        assert_eq!(
            painted,
            text.replacen(": NOT MET — ", ": \x1b[1;31mNOT MET\x1b[0m — ", 1)
        );
        let met = "s: 1 runs\n  expectation safe: MET — every seed safe";
        assert!(paint_summary(met, ExpectationVerdict::Met, true)
            .ends_with("expectation safe: \x1b[1;32mMET\x1b[0m — every seed safe"));
    }
}
