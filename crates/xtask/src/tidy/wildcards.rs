//! No catch-all arm (`_ =>`, `_ if …`, a bare binding, `Some(_)`) in a `match` over the
//! enums a new variant of which must be handled everywhere: fault kinds (`FaultKind`, and
//! `Fault`, a fault with its parameters), invariants, fencing modes and lease presets. With
//! every variant listed, the compiler names each place a new one must be handled; a catch-all
//! would take it silently. A match is "over" one of them when one of its arms names a
//! variant; in a tuple pattern, the positions where some arm names one are checked.

use super::{
    items::enclosing,
    lex::{closing, Kind, Token},
    Source,
};

/// The enums whose matches must list every variant.
const WATCHED: [&str; 5] = ["FaultKind", "Fault", "Invariant", "FencingMode", "Preset"];

/// The catch-alls kept on purpose: (file, function, why a new variant belongs there).
const ALLOWED: &[(&str, &str, &str)] = &[
    (
        "crates/live/src/plan.rs",
        "translate",
        "live mode refuses, naming it, every fault it cannot inject with signals: a new kind is \
         refused until it is implemented there (ARCHITECTURE.md, \"A fault kind\")",
    ),
    (
        "crates/live/src/plan.rs",
        "lease_checks",
        "live mode refuses every preset but the services it can start (etcd, ZooKeeper): a new \
         preset is refused until live mode starts its service",
    ),
    (
        "crates/live/src/plan.rs",
        "storage_checks",
        "live mode refuses every fencing mode it has no live store for: a new mode is refused \
         until it has one",
    ),
    (
        "crates/sim/src/faults.rs",
        "clock_effect",
        "TO LIST: only clock steps and VM suspends act on a clock, but a new kind that does \
         would be skipped here silently; sim's owner lists the other kinds, then this entry goes",
    ),
];

/// The allow-list as printed by `xtask tidy`.
pub(crate) fn allow_list() -> String {
    let mut out = format!(
        "catch-all arms allowed over {} ({}):",
        WATCHED.join(", "),
        ALLOWED.len()
    );
    for (file, function, why) in ALLOWED {
        out.push_str(&format!("\n  {file}: {function}: {why}"));
    }
    out
}

/// One arm's pattern (its alternatives) and its line.
struct Arm<'t> {
    alternatives: Vec<&'t [Token]>,
    line: usize,
}

/// `tokens[from..to]` split at the top-level `sep` tokens.
fn split<'t>(tokens: &'t [Token], sep: &str) -> Vec<&'t [Token]> {
    let (mut parts, mut depth, mut start) = (Vec::new(), 0i32, 0);
    for (i, token) in tokens.iter().enumerate() {
        if token.kind != Kind::Punct {
            continue;
        }
        match token.text.as_str() {
            "(" | "[" | "{" => depth += 1,
            ")" | "]" | "}" => depth -= 1,
            text if text == sep && depth == 0 => {
                parts.push(&tokens[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&tokens[start..]);
    parts
}

/// Where the body of the arm whose `=>` is at `arrow` ends: the index of the next arm's
/// first token.
fn arm_end(tokens: &[Token], arrow: usize, close: usize) -> usize {
    let first = arrow + 1;
    if tokens[first].is("{") {
        let end = closing(tokens, first) + 1;
        return if tokens[end].is(",") { end + 1 } else { end };
    }
    let block_like = ["if", "match", "loop", "while", "for", "unsafe"]
        .iter()
        .any(|w| tokens[first].is(w));
    let mut depth = 0i32;
    let mut at = first;
    while at < close {
        let token = &tokens[at];
        if token.kind == Kind::Punct {
            match token.text.as_str() {
                "(" | "[" | "{" => depth += 1,
                ")" | "]" | "}" => {
                    depth -= 1;
                    let next = &tokens[at + 1];
                    let continues = [",", ".", "?", "else"].iter().any(|t| next.is(t));
                    if depth == 0 && block_like && token.is("}") && !continues {
                        return at + 1;
                    }
                }
                "," if depth == 0 => return at + 1,
                _ => {}
            }
        }
        at += 1;
    }
    close
}

/// The `{` opening the body of the match at `at`: the first one outside brackets.
fn scrutinee_end(tokens: &[Token], at: usize) -> Option<usize> {
    let mut depth = 0i32;
    for (i, token) in tokens.iter().enumerate().skip(at + 1) {
        match token.text.as_str() {
            "(" | "[" if token.kind == Kind::Punct => depth += 1,
            ")" | "]" if token.kind == Kind::Punct => depth -= 1,
            "{" if token.kind == Kind::Punct && depth == 0 => return Some(i),
            _ => {}
        }
    }
    None
}

/// The arms of the match whose body braces are `open`..`close`.
fn arms(tokens: &[Token], open: usize, close: usize) -> Vec<Arm<'_>> {
    let mut out = Vec::new();
    let mut at = open + 1;
    while at < close {
        let mut depth = 0i32;
        let Some(arrow) = (at..close).find(|&i| {
            let t = &tokens[i];
            if t.kind == Kind::Punct {
                depth += match t.text.as_str() {
                    "(" | "[" | "{" => 1,
                    ")" | "]" | "}" => -1,
                    _ => 0,
                };
            }
            depth == 0 && t.is("=>")
        }) else {
            break;
        };
        let guard = (at..arrow).find(|&i| tokens[i].is("if")).unwrap_or(arrow);
        let pattern = &tokens[at..guard];
        let alternatives = split(pattern, "|")
            .into_iter()
            .filter(|alt| !alt.is_empty())
            .collect();
        out.push(Arm {
            alternatives,
            line: tokens[at].line,
        });
        at = arm_end(tokens, arrow, close);
    }
    out
}

/// A pattern's elements: a tuple's, or the pattern itself.
fn elements(pattern: &[Token]) -> Vec<&[Token]> {
    let is_tuple = pattern.first().is_some_and(|t| t.is("("))
        && closing(pattern, 0) == pattern.len() - 1
        && split(&pattern[1..pattern.len() - 1], ",").len() > 1;
    if is_tuple {
        split(&pattern[1..pattern.len() - 1], ",")
    } else {
        vec![pattern]
    }
}

/// The watched enum `element` names a variant of, if any.
fn names_watched(element: &[Token]) -> Option<&'static str> {
    element.windows(2).find_map(|pair| {
        WATCHED
            .iter()
            .find(|w| pair[0].is(w) && pair[1].is("::"))
            .copied()
    })
}

/// Whether `element` matches anything: `_`, a binding, or `Some(`/`&` of one.
fn catch_all(mut element: &[Token]) -> bool {
    loop {
        match element {
            [one] => {
                let binding = one.kind == Kind::Ident
                    && one.text.starts_with(|c: char| c.is_lowercase() || c == '_')
                    && !["true", "false"].contains(&one.text.as_str());
                return one.is("_") || binding;
            }
            [first, rest @ ..] if first.is("&") || first.is("ref") || first.is("mut") => {
                element = rest;
            }
            [some, open, inner @ .., close] if some.is("Some") && open.is("(") && close.is(")") => {
                element = inner;
            }
            [name, at, rest @ ..] if name.kind == Kind::Ident && at.is("@") => element = rest,
            _ => return false,
        }
    }
}

/// The problems in one match: each catch-all arm at a position where an arm names a
/// watched variant.
fn catch_alls(arms: &[Arm<'_>]) -> Vec<(usize, &'static str)> {
    let mut watched: Vec<(usize, usize, &'static str)> = Vec::new(); // (arity, position, enum)
    for arm in arms {
        for alt in &arm.alternatives {
            let parts = elements(alt);
            for (position, part) in parts.iter().enumerate() {
                if let Some(name) = names_watched(part) {
                    watched.push((parts.len(), position, name));
                }
            }
        }
    }
    let mut out = Vec::new();
    for arm in arms {
        let hit = arm.alternatives.iter().find_map(|alt| {
            let parts = elements(alt);
            watched.iter().find_map(|&(arity, position, name)| {
                let whole = parts.len() == 1 && catch_all(parts[0]);
                let at = parts.len() == arity && catch_all(parts[position]);
                (whole || at).then_some(name)
            })
        });
        if let Some(name) = hit {
            out.push((arm.line, name));
        }
    }
    out
}

/// Every catch-all over a watched enum outside the allow-list, and every stale entry.
pub(crate) fn check(sources: &[Source]) -> Vec<String> {
    let mut problems = Vec::new();
    let mut used = vec![false; ALLOWED.len()];
    for source in sources {
        let tokens = &source.tokens;
        for (at, token) in tokens.iter().enumerate() {
            if !token.is("match") {
                continue;
            }
            let Some(open) = scrutinee_end(tokens, at) else {
                continue;
            };
            let close = closing(tokens, open);
            for (line, name) in catch_alls(&arms(tokens, open, close)) {
                let function = enclosing(&source.functions, at).map_or("", |f| f.path.as_str());
                let short = function.rsplit("::").next().unwrap_or_default();
                let allowed = ALLOWED.iter().position(|(file, f, _)| {
                    *file == source.path && (*f == function || *f == short)
                });
                match allowed {
                    Some(index) => used[index] = true,
                    None => problems.push(format!(
                        "{}:{line}: a catch-all arm in a match over `{name}` (in `{function}`): a \
                         new variant would fall into it silently. List every variant (the \
                         compiler then names this place), or allow it with a reason in \
                         crates/xtask/src/tidy/wildcards.rs",
                        source.path
                    )),
                }
            }
        }
    }
    for (entry, used) in ALLOWED.iter().zip(used) {
        if !used {
            problems.push(format!(
                "{}: `{}` has no catch-all over a watched enum any more: remove its entry from \
                 crates/xtask/src/tidy/wildcards.rs",
                entry.0, entry.1
            ));
        }
    }
    problems
}

#[cfg(test)]
mod tests {
    use super::*;

    fn problems(code: &str) -> Vec<String> {
        check(&[Source::parse("crates/x/src/lib.rs", "x", code)])
            .into_iter()
            .filter(|p| !p.contains("any more"))
            .collect()
    }

    #[test]
    fn a_wildcard_over_a_fault_kind_is_caught() {
        let code =
            "fn f(k: FaultKind) -> u8 {\n match k {\n FaultKind::GcPause => 1,\n _ => 2,\n }\n}";
        let found = problems(code);
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(
            found[0].starts_with(
                "crates/x/src/lib.rs:4: a catch-all arm in a match over `FaultKind` (in `f`)"
            ),
            "{found:?}"
        );
    }

    #[test]
    fn guards_bindings_options_and_tuple_positions_are_catch_alls() {
        let cases = [
            ("match f { Fault::GcPause { node, .. } if node.is_empty() => 1, other => 2 }", 1),
            ("match f { Fault::Panic { .. } => 1, _ if x => 2, Fault::GcPause { .. } => 3 }", 1),
            ("match p { Some(Preset::Etcd) => 1, Some(_) | None => 2 }", 1),
            ("match (a, p) { (Some(t), _) => t, (None, Some(Preset::Etcd)) => 1, (None, _) => 0 }", 2),
            ("match i { Invariant::I1 => if a { 1 } else { 2 } _ => 3 }", 1),
            ("match m { FencingMode::None => { 1 } ref any => 2 }", 1),
        ];
        for (case, expected) in cases {
            let found = problems(&format!("fn f() {{ {case} }}"));
            assert_eq!(found.len(), expected, "{case}: {found:?}");
        }
    }

    #[test]
    fn exhaustive_matches_and_other_enums_pass() {
        let cases = [
            "match k { FaultKind::GcPause | FaultKind::Panic => 1, FaultKind::Partition => 2 }",
            "match e { EventKind::Granted { .. } => 1, _ => 2 }",
            "match (a, p) { (Some(t), Some(Preset::Etcd)) => t, (_, None) => 0, (None, Some(p)) if p == q => 1, }",
            "match k { FaultKind::ClockStep => vec![true, false], FaultKind::GcPause => { x } }",
        ];
        for case in cases {
            let found = problems(&format!("fn f() {{ {case} }}"));
            // The third case's `(None, Some(p))` is a binding at the preset's position.
            let expected = usize::from(case.contains("Some(p)"));
            assert_eq!(found.len(), expected, "{case}: {found:?}");
        }
    }

    #[test]
    fn an_allowed_catch_all_passes_and_a_stale_entry_is_named() {
        let live = Source::parse(
            "crates/live/src/plan.rs",
            "live",
            "fn translate(f: Fault) { match f { Fault::GcPause { .. } => 1, _ => 2 } }",
        );
        let found = check(&[live]);
        assert!(found.iter().all(|p| !p.contains("translate")), "{found:?}");
        assert_eq!(found.len(), ALLOWED.len() - 1, "{found:?}");
        let stale = check(&[]);
        assert!(
            stale[0].contains("`translate` has no catch-all"),
            "{stale:?}"
        );
    }
}
