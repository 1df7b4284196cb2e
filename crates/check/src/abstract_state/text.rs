//! A state's canonical text read back: [`is_canonical`] accepts exactly the texts
//! [`State`]'s `Display` writes (a report edited by hand, or a shard naming states no run can
//! reach, is refused by `merge`).

use super::{Lease, Process, Role, ScopeState, State, Store, COUNTED_ABOVE};

/// Most scopes a counted state's text may claim (`N x` summed): a bound on what one text may
/// ask for, far above any history's scope count (a history holds at most 10 M events).
const MAX_SCOPES: u64 = 10_000_000;

/// Whether `text` is a state's canonical text: it reads as a state (or `no lease granted`),
/// and that state writes exactly `text` (sorted, counted only above [`COUNTED_ABOVE`]
/// scopes). The error names what was expected where the text departs from it.
pub fn is_canonical(text: &str) -> Result<(), String> {
    if text == "no lease granted" {
        return Ok(());
    }
    let counted = read_counted(text)?;
    let total: u64 = counted.iter().map(|(_, n)| u64::from(*n)).sum();
    if total > MAX_SCOPES {
        return Err(format!("at most {MAX_SCOPES} scopes, got {total}"));
    }
    let mut written = String::new();
    if total as usize > COUNTED_ABOVE {
        if counted.windows(2).any(|pair| pair[0].0 >= pair[1].0) {
            return Err("distinct scope abstractions in sorted order".to_string());
        }
        super::render_counted(&counted, &mut written);
    } else {
        if counted.windows(2).any(|pair| pair[0].0 > pair[1].0) {
            return Err("scopes in sorted order".to_string());
        }
        let mut scopes = Vec::new();
        for (scope, n) in counted {
            scopes.extend(std::iter::repeat_n(scope, n as usize));
        }
        State { scopes }.render(&mut written);
    }
    if written != text {
        return Err(format!("the canonical text {written:?}"));
    }
    Ok(())
}

/// The scope abstractions of `text` with their counts (`2x[…]`), as written.
fn read_counted(text: &str) -> Result<Vec<(ScopeState, u32)>, String> {
    let mut out = Vec::new();
    let mut rest = text;
    loop {
        let digits = rest
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(rest.len());
        let n = if digits > 0 && rest[digits..].starts_with('x') {
            let n: u32 = rest[..digits]
                .parse()
                .map_err(|_| format!("a count below 2^32, got {:?}", &rest[..digits]))?;
            rest = &rest[digits + 1..];
            n
        } else {
            1
        };
        let body = rest
            .strip_prefix('[')
            .and_then(|after| after.split_once(']'))
            .ok_or_else(|| format!("a scope `[lease=… store=… inflight=…]`, got {rest:?}"))?;
        out.push((read_scope(body.0)?, n));
        rest = body.1;
        if rest.is_empty() {
            return Ok(out);
        }
        rest = rest
            .strip_prefix(' ')
            .ok_or_else(|| format!("a space between scopes, got {rest:?}"))?;
    }
}

/// One scope's text between its brackets.
fn read_scope(text: &str) -> Result<ScopeState, String> {
    let (head, workers) = match text.split_once(": ") {
        Some((head, workers)) => (head, Some(workers)),
        None => (text, None),
    };
    let fields: Vec<&str> = head.split(' ').collect();
    let [lease, store, inflight] = fields[..] else {
        return Err(format!("`lease=… store=… inflight=…`, got {head:?}"));
    };
    let value = |field: &str, name: &str| -> Result<String, String> {
        field
            .strip_prefix(name)
            .and_then(|rest| rest.strip_prefix('='))
            .map(str::to_string)
            .ok_or_else(|| format!("`{name}=…`, got {field:?}"))
    };
    let lease = named(
        &value(lease, "lease")?,
        &[Lease::Free, Lease::Held, Lease::Double],
        Lease::name,
    )?;
    let store = value(store, "store")?
        .split('+')
        .map(|s| {
            named(
                s,
                &[Store::Empty, Store::Below, Store::Equal, Store::Above],
                Store::name,
            )
        })
        .collect::<Result<Vec<_>, _>>()?;
    let (inflight_current, inflight_stale) = match value(inflight, "inflight")?.as_str() {
        "none" => (false, false),
        "current" => (true, false),
        "stale" => (false, true),
        "current+stale" => (true, true),
        other => {
            return Err(format!(
                "inflight none, current, stale or current+stale, got {other:?}"
            ))
        }
    };
    let workers = match workers {
        None => Vec::new(),
        Some(list) => list
            .split(", ")
            .map(read_worker)
            .collect::<Result<_, _>>()?,
    };
    if store.windows(2).any(|pair| pair[0] >= pair[1]) {
        return Err(format!("store values sorted and distinct, got {text:?}"));
    }
    if workers.windows(2).any(|pair| pair[0] > pair[1]) {
        return Err(format!("workers in sorted order, got {text:?}"));
    }
    Ok(ScopeState {
        lease,
        store,
        inflight_current,
        inflight_stale,
        workers,
    })
}

/// `role(process)`.
fn read_worker(text: &str) -> Result<(Role, Process), String> {
    let (role, process) = text
        .strip_suffix(')')
        .and_then(|inner| inner.split_once('('))
        .ok_or_else(|| format!("a worker `role(process)`, got {text:?}"))?;
    let roles = [
        Role::Holder,
        Role::ExpiredHolder,
        Role::StaleHolder,
        Role::Ungranted,
    ];
    let processes = [
        Process::Running,
        Process::GcPaused,
        Process::VmSuspended,
        Process::CutOff,
    ];
    Ok((
        named(role, &roles, Role::name)?,
        named(process, &processes, Process::name)?,
    ))
}

/// The one of `all` whose name is `text`.
fn named<T: Copy>(text: &str, all: &[T], name: fn(T) -> &'static str) -> Result<T, String> {
    all.iter()
        .copied()
        .find(|v| name(*v) == text)
        .ok_or_else(|| {
            let names: Vec<&str> = all.iter().map(|v| name(*v)).collect();
            format!("one of {}, got {text:?}", names.join(", "))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_text_a_state_writes_reads_back_and_nothing_else_does() {
        let scope = |lease, store: Vec<Store>, workers| ScopeState {
            lease,
            store,
            inflight_current: true,
            inflight_stale: false,
            workers,
        };
        let a = scope(
            Lease::Held,
            vec![Store::Below, Store::Equal],
            vec![
                (Role::Holder, Process::Running),
                (Role::StaleHolder, Process::GcPaused),
            ],
        );
        let b = scope(Lease::Free, vec![Store::Empty], vec![]);
        for state in [
            State::default(),
            State {
                scopes: vec![a.clone()],
            },
            State {
                scopes: vec![b.clone(), a.clone()],
            },
            State {
                scopes: vec![a.clone(); 20],
            },
            State {
                scopes: [vec![b.clone(); 3], vec![a.clone(); 30]].concat(),
            },
        ] {
            let text = state.to_string();
            assert_eq!(is_canonical(&text), Ok(()), "{text}");
        }
        let good =
            "[lease=held store=below inflight=current: holder(running), stale-holder(gc-paused)]";
        assert_eq!(is_canonical(good), Ok(()));
        for bad in [
            "",
            "hello",
            "[lease=held store=below inflight=current: holder(running)",
            "[lease=owned store=below inflight=none]",
            "[lease=held store=beneath inflight=none]",
            "[lease=held store=below inflight=sometimes]",
            "[lease=held store=below inflight=none: boss(running)]",
            "[lease=held store=below inflight=none: holder(asleep)]",
            // Not sorted, counted below the threshold, a count of 1 written.
            "[lease=held store=below inflight=none: stale-holder(gc-paused), holder(running)]",
            "[lease=held store=equal+below inflight=none]",
            "[lease=held store=below+below inflight=none]",
            "[lease=held store=below inflight=none] [lease=free store=empty inflight=none]",
            "2x[lease=held store=below inflight=none]",
            "1x[lease=held store=below inflight=none]",
            "[lease=held store=below inflight=none]  [lease=free store=empty inflight=none]",
            "99999999999x[lease=held store=below inflight=none]",
            "4294967295x[lease=held store=below inflight=none]",
        ] {
            assert!(is_canonical(bad).is_err(), "{bad:?} accepted");
        }
    }
}
