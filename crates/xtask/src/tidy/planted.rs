//! The planted bugs' sites, read from the code: every `active(Mutant::X)` is found, named
//! `file: Type::function` (relative to `crates/`), and the catalogue's `site` of X must be
//! one of them (a moved or renamed site fails here, not in a reader's head). Each must also be
//! a branch of its own (ARCHITECTURE.md, `crates/planted`): `if active(…) {`, `if active(…)
//! && …`, or a match arm guarded by it (`… if active(…) =>`), never a term inside the real
//! condition or a value the real code reads.

use std::collections::BTreeMap;

use super::{items::enclosing, lex::Kind, Source};
use crate::planted::MutantInfo;

/// One `active(Mutant::X)` in the code.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Site {
    /// `X`.
    mutant: String,
    /// `model/src/lease.rs: LeaseService::renew`.
    name: String,
    /// `crates/model/src/lease.rs:565`.
    at: String,
    /// Whether it is a branch of its own.
    own_branch: bool,
}

/// The planted sites of `source` (none in `planted`, which defines the switch, or `xtask`).
fn sites(source: &Source) -> Vec<Site> {
    if source.krate == "planted" || source.krate == "xtask" {
        return Vec::new();
    }
    let tokens = &source.tokens;
    let mut out = Vec::new();
    for (at, token) in tokens.iter().enumerate() {
        if !token.is("active") || !tokens.get(at + 1).is_some_and(|t| t.is("(")) {
            continue;
        }
        // `active(Mutant::X)` or `active(fencesim_planted::Mutant::X)`.
        let close = (at + 2..tokens.len()).find(|&i| tokens[i].is(")"));
        let Some(close) = close else { continue };
        let inside = &tokens[at + 2..close];
        let Some(mutant) = inside
            .windows(3)
            .find(|w| w[0].is("Mutant") && w[1].is("::") && w[2].kind == Kind::Ident)
            .map(|w| w[2].text.clone())
        else {
            continue;
        };
        // Back over a path prefix (`fencesim_planted::`) to what comes before the call.
        let mut start = at;
        while start >= 2 && tokens[start - 1].is("::") && tokens[start - 2].kind == Kind::Ident {
            start -= 2;
        }
        let after = tokens.get(close + 1);
        let own_branch = start > 0
            && tokens[start - 1].is("if")
            && after.is_some_and(|t| t.is("{") || t.is("&&") || t.is("=>"));
        let function = enclosing(&source.functions, at).map_or("?", |f| f.path.as_str());
        let file = source.path.strip_prefix("crates/").unwrap_or(&source.path);
        out.push(Site {
            mutant,
            name: format!("{file}: {function}"),
            at: format!("{}:{}", source.path, token.line),
            own_branch,
        });
    }
    out
}

/// Sites named wrongly by the catalogue, mutants with no site, and hooks inside an
/// expression.
pub(crate) fn check(sources: &[Source], catalogue: &[MutantInfo]) -> Vec<String> {
    let mut by_mutant: BTreeMap<String, Vec<Site>> = BTreeMap::new();
    let mut problems = Vec::new();
    for site in sources.iter().flat_map(sites) {
        if !site.own_branch {
            problems.push(format!(
                "{}: the planted hook of {} sits inside an expression: make it a branch of its \
                 own (`if active(Mutant::{}) {{ …planted… }}` beside the real code, or a match \
                 arm guarded by `active` alone), so the real code reads as if it were absent",
                site.at, site.mutant, site.mutant
            ));
        }
        by_mutant.entry(site.mutant.clone()).or_default().push(site);
    }
    for info in catalogue {
        let name = format!("{:?}", info.mutant);
        let found = by_mutant.get(&name).map(Vec::as_slice).unwrap_or_default();
        if found.is_empty() {
            problems.push(format!(
                "planted bug {name}: no `active(Mutant::{name})` in the code (its catalogue site \
                 says `{}`)",
                info.site
            ));
        } else if !found.iter().any(|site| site.name == info.site) {
            let actual: Vec<String> = found
                .iter()
                .map(|site| format!("`{}` ({})", site.name, site.at))
                .collect();
            problems.push(format!(
                "planted bug {name}: crates/xtask/src/planted.rs names its site `{}`, but the \
                 code has it at {}: correct the catalogue",
                info.site,
                actual.join(", ")
            ));
        }
    }
    problems
}

#[cfg(test)]
mod tests {
    use fencesim_planted::Mutant;

    use super::*;

    fn info(site: &'static str) -> MutantInfo {
        MutantInfo {
            mutant: Mutant::ClockStepsIgnored,
            area: "clock",
            site,
            scenario: "-",
            test: ("-p x", "t"),
        }
    }

    fn problems(code: &str, site: &'static str) -> Vec<String> {
        let source = Source::parse("crates/model/src/clock.rs", "model", code);
        check(&[source], &[info(site)])
    }

    const BRANCH: &str = "impl NodeClock {\n fn wall_ns(&self) -> u64 {\n if active(Mutant::ClockStepsIgnored) {\n return 0;\n }\n 1\n }\n}";

    #[test]
    fn a_site_where_the_catalogue_says_passes() {
        assert!(problems(BRANCH, "model/src/clock.rs: NodeClock::wall_ns").is_empty());
    }

    #[test]
    fn a_moved_site_fails_naming_where_it_is() {
        let found = problems(BRANCH, "model/src/lease.rs: NodeClock::wall_ns");
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(
            found[0].contains("but the code has it at `model/src/clock.rs: NodeClock::wall_ns` (crates/model/src/clock.rs:3)"),
            "{found:?}"
        );
        let moved = BRANCH.replace("wall_ns", "now_ns");
        assert_eq!(
            problems(&moved, "model/src/clock.rs: NodeClock::wall_ns").len(),
            1
        );
        let gone = problems("fn f() {}", "model/src/clock.rs: NodeClock::wall_ns");
        assert!(
            gone[0].contains("no `active(Mutant::ClockStepsIgnored)`"),
            "{gone:?}"
        );
    }

    #[test]
    fn a_hook_inside_an_expression_fails() {
        let site = "model/src/clock.rs: f";
        for inside in [
            "fn f() { let planted = active(Mutant::ClockStepsIgnored); }",
            "fn f() { if x && active(Mutant::ClockStepsIgnored) { } }",
            "fn f() { v.filter(|d| !active(Mutant::ClockStepsIgnored) || d) }",
        ] {
            let found = problems(inside, site);
            assert_eq!(found.len(), 1, "{inside}: {found:?}");
            assert!(found[0].contains("sits inside an expression"), "{found:?}");
        }
        for own in [
            "fn f() { if fencesim_planted::active(fencesim_planted::Mutant::ClockStepsIgnored) { } }",
            "fn f() { let x = if active(Mutant::ClockStepsIgnored) && y { 1 } else { 2 }; }",
            "fn f() { match x { X::A if active(Mutant::ClockStepsIgnored) => 1, _ => 2 } }",
        ] {
            assert!(problems(own, site).is_empty(), "{own}");
        }
    }
}
