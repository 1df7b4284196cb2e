//! Length ratchets: no non-test file over [`MAX_FILE_LINES`] lines (its lines outside
//! `#[cfg(test)]` items) and no non-test function over [`MAX_FUNCTION_LINES`] code lines
//! (clippy's `too_many_lines` count). The files and functions over them when the ratchet
//! arrived are listed with their size then: an entry may only shrink (its size is lowered
//! with it, and it is removed once under the limit), and anything unlisted that crosses a
//! limit fails.

use super::Source;

/// Lines a non-test file may have.
pub(crate) const MAX_FILE_LINES: usize = 800;
/// Code lines a non-test function may have.
pub(crate) const MAX_FUNCTION_LINES: usize = 70;

/// Files over the limit: (path, its non-test lines).
const LONG_FILES: &[(&str, usize)] = &[
    // TO CUT (issue 33): each along its seams, then its entry goes.
    ("crates/views/src/timeline.rs", 952),
];

/// Functions over the limit: (`path: Type::function`, its code lines).
const LONG_FUNCTIONS: &[(&str, usize)] = &[
    // TO CUT (issue 33): each along its seams, then its entry goes.
    ("crates/cli/src/replay.rs: replay", 93),
    ("crates/cli/src/run.rs: run", 86),
    ("crates/cli/src/shrink.rs: exhaustive", 80),
    ("crates/cli/src/shrink.rs: explore", 76),
    ("crates/cli/src/shrink.rs: guided", 89),
    ("crates/tune/src/lib.rs: prepare", 73),
    ("crates/tune/src/plot/metrics.rs: draw_metric_panel", 72),
    ("crates/tune/src/plot/tradeoff.rs: draw_pareto", 75),
    ("crates/tune/src/recommend.rs: rules", 83),
    ("crates/fencesim/src/fs.rs: destination", 72),
    ("crates/live/src/worker/store.rs: Worker::write", 72),
    ("crates/profile/src/prometheus.rs: Exposition::line", 83),
    (
        "crates/verdict/src/check_report.rs: check_seeds_counted_once",
        89,
    ),
    ("crates/verdict/src/summary.rs: evaluate_stats", 93),
    ("crates/views/src/replay_text.rs: replay_text", 84),
    ("crates/views/src/timeline.rs: collapse", 87),
    ("crates/views/src/timeline.rs: lease_text", 90),
    ("crates/xtask/src/search_bench.rs: report", 71),
];

/// The allow-lists as printed by `xtask tidy`.
pub(crate) fn allow_list() -> String {
    let mut out = format!(
        "files over {MAX_FILE_LINES} lines allowed until they shrink ({}):",
        LONG_FILES.len()
    );
    for (path, lines) in LONG_FILES {
        out.push_str(&format!("\n  {path}: {lines}"));
    }
    out.push_str(&format!(
        "\nfunctions over {MAX_FUNCTION_LINES} code lines allowed until they shrink ({}):",
        LONG_FUNCTIONS.len()
    ));
    for (function, lines) in LONG_FUNCTIONS {
        out.push_str(&format!("\n  {function}: {lines}"));
    }
    out
}

/// Compares what is measured (`name`, size) against a limit and its allow-list.
fn ratchet(
    what: &str,
    limit: usize,
    measured: &[(String, usize)],
    allowed: &[(&str, usize)],
) -> Vec<String> {
    let mut problems = Vec::new();
    for (name, size) in measured.iter().filter(|(_, size)| *size > limit) {
        match allowed.iter().find(|(listed, _)| listed == name) {
            None => problems.push(format!(
                "{name}: {size} lines, over the {limit}-line limit for a {what}: cut it along \
                 its seams"
            )),
            Some((_, listed)) if size > listed => problems.push(format!(
                "{name}: {size} lines, grown from the {listed} its allow-list entry allows (a \
                 listed {what} may only shrink): cut it along its seams"
            )),
            Some((_, listed)) if size < listed => problems.push(format!(
                "{name}: shrank from {listed} to {size} lines: lower its entry in \
                 crates/xtask/src/tidy/ratchet.rs to {size}"
            )),
            Some(_) => {}
        }
    }
    for (listed, _) in allowed {
        let over = measured
            .iter()
            .any(|(name, size)| name == listed && *size > limit);
        if !over {
            problems.push(format!(
                "{listed}: no longer a {what} over {limit} lines (or gone): remove its entry \
                 from crates/xtask/src/tidy/ratchet.rs"
            ));
        }
    }
    problems
}

/// Every file and function over its limit and not allowed, and every entry to update.
pub(crate) fn check(sources: &[Source]) -> Vec<String> {
    let files: Vec<(String, usize)> = sources.iter().map(|s| (s.path.clone(), s.lines)).collect();
    let mut functions: Vec<(String, usize)> = sources
        .iter()
        .flat_map(|s| {
            s.functions
                .iter()
                .map(move |f| (format!("{}: {}", s.path, f.path), f.code_lines))
        })
        .collect();
    // Two functions of one name in one file (`from` of two `From` impls): the longer counts.
    functions.sort_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)));
    functions.dedup_by(|later, earlier| later.0 == earlier.0);
    let mut problems = ratchet("file", MAX_FILE_LINES, &files, LONG_FILES);
    problems.extend(ratchet(
        "function",
        MAX_FUNCTION_LINES,
        &functions,
        LONG_FUNCTIONS,
    ));
    problems
}

#[cfg(test)]
mod tests {
    use super::*;

    fn measured(sizes: &[(&str, usize)]) -> Vec<(String, usize)> {
        sizes.iter().map(|(n, s)| (n.to_string(), *s)).collect()
    }

    #[test]
    fn the_ratchet_fails_on_growth_and_on_an_unlisted_crossing_only() {
        let allowed = [("a.rs", 900), ("b.rs", 850)];
        assert!(ratchet(
            "file",
            800,
            &measured(&[("a.rs", 900), ("b.rs", 850), ("c.rs", 800)]),
            &allowed
        )
        .is_empty());
        let grown = ratchet(
            "file",
            800,
            &measured(&[("a.rs", 901), ("b.rs", 850)]),
            &allowed,
        );
        assert_eq!(grown.len(), 1);
        assert!(
            grown[0].starts_with("a.rs: 901 lines, grown from the 900"),
            "{grown:?}"
        );
        let crossed = ratchet(
            "file",
            800,
            &measured(&[("a.rs", 900), ("b.rs", 850), ("c.rs", 801)]),
            &allowed,
        );
        assert_eq!(
            crossed,
            ["c.rs: 801 lines, over the 800-line limit for a file: cut it along its seams"]
        );
    }

    #[test]
    fn a_shrunk_or_fixed_entry_must_be_updated() {
        let allowed = [("a.rs", 900), ("b.rs", 850)];
        let found = ratchet(
            "file",
            800,
            &measured(&[("a.rs", 880), ("b.rs", 700)]),
            &allowed,
        );
        assert_eq!(found.len(), 2, "{found:?}");
        assert!(found[0].contains("shrank from 900 to 880"), "{found:?}");
        assert!(
            found[1].starts_with("b.rs: no longer a file over 800"),
            "{found:?}"
        );
    }

    #[test]
    fn functions_are_measured_per_file_and_impl() {
        let body: String = (0..71).map(|i| format!("    let x{i} = {i};\n")).collect();
        let code = format!("impl A {{\n fn long() {{\n{body} }}\n}}\nfn short() {{ 1 }}\n");
        let source = Source::parse("crates/x/src/lib.rs", "x", &code);
        // The real allow-lists' entries (absent from this one-file workspace) are left out.
        let found: Vec<String> = check(&[source])
            .into_iter()
            .filter(|problem| problem.starts_with("crates/x/"))
            .collect();
        assert_eq!(
            found,
            ["crates/x/src/lib.rs: A::long: 71 lines, over the 70-line limit for a function: cut it along its seams"]
        );
    }
}
