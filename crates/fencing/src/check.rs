//! Test helper: runs a list of (operation, expected outcome) steps against a fence.

use std::collections::BTreeMap;

use fencesim_model::{
    fence::{Fence, Verdict, WriteRequest},
    lease::LeaseView,
    Token,
};

/// One step presented to a fence.
#[derive(Clone, Debug)]
pub(crate) enum Op {
    Write {
        writer: &'static str,
        resource: &'static str,
        scope: &'static str,
        token: Token,
    },
    /// `Fence::raise_fence`.
    Raise(&'static str, Token),
    /// `Fence::read_token`.
    Read(&'static str),
    Restart,
}

/// A write by `worker-0` to `resource`, presenting a token of the lease on the same name.
pub(crate) fn write(resource: &'static str, token: Token) -> Op {
    Op::Write {
        writer: "worker-0",
        resource,
        scope: resource,
        token,
    }
}

pub(crate) fn write_by(writer: &'static str, resource: &'static str, token: Token) -> Op {
    Op::Write {
        writer,
        resource,
        scope: resource,
        token,
    }
}

pub(crate) fn write_scoped(resource: &'static str, scope: &'static str, token: Token) -> Op {
    Op::Write {
        writer: "worker-0",
        resource,
        scope,
        token,
    }
}

/// A lease service stand-in: scope -> current holder's token.
#[derive(Debug, Default)]
pub(crate) struct FakeLeases(pub(crate) BTreeMap<&'static str, Token>);

impl LeaseView for FakeLeases {
    fn holder_token(&self, scope: &str) -> Option<Token> {
        self.0.get(scope).copied()
    }
}

pub(crate) fn render(verdict: &Verdict) -> String {
    match verdict {
        Verdict::Accepted { previous: None } => "accepted".to_string(),
        Verdict::Accepted {
            previous: Some(previous),
        } => format!("accepted previous={previous}"),
        Verdict::Rejected {
            accepted: None,
            reason,
        } => format!("rejected: {reason}"),
        Verdict::Rejected {
            accepted: Some(accepted),
            reason,
        } => {
            format!("rejected accepted={accepted}: {reason}")
        }
    }
}

/// Runs every step, then compares the whole transcript so a failure shows all of it.
pub(crate) fn check(fence: &mut dyn Fence, lease: Option<&dyn LeaseView>, steps: &[(Op, &str)]) {
    let mut actual = Vec::with_capacity(steps.len());
    for (op_id, (op, _)) in (1..).zip(steps) {
        let outcome = match op {
            Op::Write {
                writer,
                resource,
                scope,
                token,
            } => {
                let request = WriteRequest {
                    op: op_id,
                    resource: resource.to_string(),
                    lease_scope: scope.to_string(),
                    writer: writer.to_string(),
                    token: *token,
                    payload: format!("output of op {op_id}"),
                };
                render(&fence.write(&request, lease))
            }
            Op::Raise(resource, token) => render(&fence.raise_fence(resource, *token)),
            Op::Read(resource) => match fence.read_token(resource) {
                Some(token) => format!("token={token}"),
                None => "token=none".to_string(),
            },
            Op::Restart => {
                fence.restart();
                "restarted".to_string()
            }
        };
        actual.push(outcome);
    }
    let expected: Vec<&str> = steps.iter().map(|(_, expect)| *expect).collect();
    if actual != expected {
        let mut table = String::new();
        for (index, ((op, expect), got)) in steps.iter().zip(&actual).enumerate() {
            let mark = if expect == got { " " } else { "!" };
            table.push_str(&format!(
                "{mark} step {index}: {op:?}\n    expected: {expect}\n    actual:   {got}\n"
            ));
        }
        panic!(
            "fence {} diverged from the expected steps:\n{table}",
            fence.name()
        );
    }
}
