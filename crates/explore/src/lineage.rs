//! Lineage-driven targeting: for accepted writes of a passing run, the faults that could have
//! made them stale, proposed as new plans (after Alvaro et al.'s lineage-driven fault
//! injection: choose only faults that could have undone a known good outcome).
//!
//! A write the storage accepted was safe because its writer still held the lease when the
//! write landed. For a write sent at `s` under a lease last granted or renewed at `r` (so the
//! service expires it near `e = r + TTL`), these faults, each beginning just before `s` (after
//! the writer checked its lease, before it sent), could have undone that:
//!
//! - a **GC pause** or **VM suspend** of the writer lasting past `e` (the write goes out after
//!   the lease expired and, if the next holder was quick, after the next grant);
//! - a **hold** of the writer's messages to the storage past `e` (the write is delivered
//!   after the next grant);
//! - a **backward step of the writer's clock** (a deadline read from the wall clock moves
//!   later; a monotonic deadline ignores it — the run says which);
//! - a **restart of the lease service** (a volatile token source re-issues the token) or of
//!   the **storage** (a volatile store forgets the high-water token).
//!
//! Past `e` by how much decides the outcome: a stale write that lands before the next
//! holder's first write breaks I4 even under max-token fencing, one that lands after is
//! rejected. So each stretch is proposed at two overshoots, spread over `[0, TTL)` by a
//! low-discrepancy sequence, and the search mutates from there.
//!
//! Only fault kinds of the scenario's profile are proposed, never larger than the profile's
//! largest of the kind: a violation found is one the profile could have produced.

use std::collections::BTreeMap;

use fencesim_model::{
    history::{EventKind, History},
    nodes, OpId, NS_PER_MS,
};
use fencesim_scenario::{Fault, FaultKind, TimedFault};

use crate::profile::Profile;

/// Accepted writes of one run that proposals are made for at most (spread evenly over the
/// run's accepted writes).
pub const WRITES_PER_RUN: usize = 4;

/// Overshoots proposed per stretch (see the module docs).
pub const OVERSHOOTS: usize = 2;

/// A new schedule for the run's seed, and why.
#[derive(Clone, Debug, PartialEq)]
pub struct Proposal {
    /// The whole schedule (the run's, with one fault added or resized).
    pub schedule: Vec<TimedFault>,
    /// Which write it targets and how, in words.
    pub why: String,
    /// A refinement of a fault already in the schedule (aimed at a window the run just
    /// missed), not a fault added.
    pub refined: bool,
}

/// Rejected stale writes of one run that refinements are made for at most.
pub const REFINEMENTS_PER_RUN: usize = 4;

/// The `i`-th point of the golden-ratio sequence in [0, 1).
fn spread(i: usize) -> f64 {
    (0.5 + i as f64 * 0.618_033_988_749_895).fract()
}

/// Proposals for `history`'s accepted writes under `profile`, with the lease's TTL `ttl_ms`.
pub(crate) fn proposals(
    profile: &Profile,
    ttl_ms: f64,
    schedule: &[TimedFault],
    history: &History,
) -> Vec<Proposal> {
    let mut out = refinements(profile, schedule, history);
    for added in additions(profile, ttl_ms, history) {
        let mut with = schedule.to_vec();
        with.push(added.0);
        out.push(Proposal {
            schedule: with,
            why: added.1,
            refined: false,
        });
    }
    out
}

/// An accepted write: its writer and token, when it was sent, and when its lease was last
/// granted or renewed before that.
struct AcceptedWrite {
    writer: String,
    token: u64,
    sent_ms: f64,
    renewed_ms: f64,
}

/// The accepted writes of `history` whose send it recorded, in order.
fn accepted_writes(history: &History) -> Vec<AcceptedWrite> {
    let mut sent: BTreeMap<OpId, f64> = BTreeMap::new();
    let mut accepted = Vec::new();
    let mut renewals: BTreeMap<(String, u64), Vec<f64>> = BTreeMap::new();
    for event in &history.events {
        let at_ms = event.t_ns as f64 / NS_PER_MS as f64;
        match &event.kind {
            EventKind::WriteSent { op, .. } => {
                sent.insert(*op, at_ms);
            }
            EventKind::Granted { holder, token, .. } | EventKind::Renewed { holder, token, .. } => {
                renewals
                    .entry((holder.clone(), *token))
                    .or_default()
                    .push(at_ms);
            }
            EventKind::WriteAccepted {
                op, writer, token, ..
            } => {
                if let Some(&sent_ms) = sent.get(op) {
                    accepted.push((writer.clone(), *token, sent_ms));
                }
            }
            _ => {}
        }
    }
    accepted
        .into_iter()
        .map(|(writer, token, sent_ms)| {
            let renewed_ms = renewals
                .get(&(writer.clone(), token))
                .and_then(|times| times.iter().rev().find(|&&t| t <= sent_ms).copied())
                .unwrap_or(sent_ms);
            AcceptedWrite {
                writer,
                token,
                sent_ms,
                renewed_ms,
            }
        })
        .collect()
}

/// Faults (with why) that could have made an accepted write of `history` stale.
fn additions(profile: &Profile, ttl_ms: f64, history: &History) -> Vec<(TimedFault, String)> {
    let accepted = accepted_writes(history);
    let mut out = Vec::new();
    let picks = WRITES_PER_RUN.min(accepted.len());
    for pick in 0..picks {
        let write = &accepted[pick * accepted.len() / picks];
        let at_ms = (write.sent_ms - 1.0).max(0.0);
        if at_ms >= profile.duration_ms {
            continue;
        }
        let (writer, token, sent_ms) = (&write.writer, write.token, write.sent_ms);
        let to_expiry = (write.renewed_ms + ttl_ms - at_ms).max(0.0);
        let what = format!("{writer}'s write with token {token} sent at {sent_ms:.0} ms");
        for k in 0..OVERSHOOTS {
            for kind in [
                FaultKind::GcPause,
                FaultKind::VmSuspend,
                FaultKind::HoldRelease,
            ] {
                // Past the expiry by up to a TTL, or by what the profile's largest fault of
                // the kind leaves.
                let max = profile.max_size.get(&kind).copied().unwrap_or(0.0);
                let overshoot = spread(pick * OVERSHOOTS + k) * ttl_ms.min(max - to_expiry);
                let stretch = to_expiry + overshoot;
                if let Some(fault) = stretched(profile, kind, writer, stretch) {
                    out.push((
                        TimedFault { at_ms, fault },
                        format!(
                            "{} of {writer} from just before {what} to {overshoot:.0} ms past \
                             its lease's expiry",
                            kind.name()
                        ),
                    ));
                }
            }
        }
        out.extend(steps_and_restarts(profile, ttl_ms, writer, at_ms, &what));
    }
    out
}

/// A clock step back of the writer, and restarts of the lease service and the storage, just
/// before a write (`what`), each if the profile has its kind.
fn steps_and_restarts(
    profile: &Profile,
    ttl_ms: f64,
    writer: &str,
    at_ms: f64,
    what: &str,
) -> Vec<(TimedFault, String)> {
    let mut out = Vec::new();
    if profile.kinds.contains(&FaultKind::ClockStep) {
        let delta = profile.clamp(FaultKind::ClockStep, ttl_ms);
        out.push((
            TimedFault {
                at_ms,
                fault: Fault::ClockStep {
                    node: writer.to_string(),
                    delta_ms: -delta,
                },
            },
            format!("{writer}'s clock stepped back {delta:.0} ms just before {what}"),
        ));
    }
    for (kind, node) in [
        (FaultKind::CoordinatorRestart, nodes::COORDINATOR),
        (FaultKind::StorageRestart, nodes::STORAGE),
    ] {
        if profile.kinds.contains(&kind) {
            let size = profile.clamp(kind, ttl_ms / 2.0);
            let fault = Fault::drawn(kind, node.to_string(), size, false, false);
            out.push((
                TimedFault { at_ms, fault },
                format!("{} just before {what}", kind.name()),
            ));
        }
    }
    out
}

/// A `kind` fault on `writer` lasting `stretch` ms, if the profile has the kind and can make
/// one that long.
fn stretched(profile: &Profile, kind: FaultKind, writer: &str, stretch: f64) -> Option<Fault> {
    if !profile.kinds.contains(&kind) {
        return None;
    }
    let max = profile.max_size.get(&kind).copied().unwrap_or(0.0);
    if stretch > max {
        return None;
    }
    Some(Fault::drawn(
        kind,
        writer.to_string(),
        stretch.max(crate::shrink::MIN_DURATION_MS),
        false,
        false,
    ))
}

/// For stale writes the storage rejected because the newer holder had already written (or
/// fenced), two ways to land them inside the window where max-token or fence-on-acquire cannot
/// tell they are stale (I4): the fault that delayed the stale write, shortened so that the
/// write lands midway between the newer grant and the newer holder's first write; and the
/// newer holder's first write (or fence) held past the stale write, by the first kind of the
/// profile that can hold it (a held link to the storage, a one-way partition from it, a GC
/// pause of the newer holder).
fn refinements(profile: &Profile, schedule: &[TimedFault], history: &History) -> Vec<Proposal> {
    let windows = Windows::of(history);
    let mut out = Vec::new();
    for stale in &windows.rejected {
        if out.len() >= REFINEMENTS_PER_RUN {
            break;
        }
        out.extend(refine(profile, schedule, &windows, stale));
    }
    out
}

/// The refinements of one rejected stale write (`stale`: scope, writer, newer token, when it
/// landed).
fn refine(
    profile: &Profile,
    schedule: &[TimedFault],
    windows: &Windows,
    stale: &(String, String, u64, f64),
) -> Vec<Proposal> {
    let (scope, writer, newer, landed) = (&stale.0, &stale.1, stale.2, stale.3);
    let mut out = Vec::new();
    let key = (scope.clone(), newer);
    let (Some(&grant), Some(&taken)) = (windows.granted.get(&key), windows.first_taken.get(&key))
    else {
        return out;
    };
    if taken <= grant || landed <= taken {
        return out;
    }
    let target = grant + (taken - grant) / 2.0;
    let early = landed - target;
    // The fault on the writer that ended last before the write landed delayed it.
    let delaying = schedule
        .iter()
        .enumerate()
        .filter(|(_, timed)| delays(&timed.fault, writer) && timed.end_ms() <= landed)
        .max_by(|a, b| a.1.end_ms().total_cmp(&b.1.end_ms()));
    let shortened = delaying.and_then(|(index, fault)| {
        let size = fault.fault.size_ms()?;
        (size - early >= crate::shrink::MIN_DURATION_MS).then(|| {
            let mut shortened = schedule.to_vec();
            shortened[index].fault = fault.fault.with_size_ms(size - early);
            Proposal {
                schedule: shortened,
                why: format!(
                    "{writer}'s stale write landed at {landed:.0} ms, after token \
                     {newer}'s first write ({taken:.0} ms): its {} shortened by \
                     {early:.0} ms to land at {target:.0} ms, between the grant \
                     ({grant:.0} ms) and that write",
                    fault.fault.kind().name()
                ),
                refined: true,
            }
        })
    });
    out.extend(shortened);
    // Or the newer holder's first write held until after the stale one.
    let Some((holder, first_sent)) = windows.first_writer.get(&key) else {
        return out;
    };
    let from_ms = first_sent.map_or(grant, |t| (t - 1.0).max(grant));
    let hold_ms = landed - from_ms + 50.0;
    if let Some(fault) = holding(profile, holder, hold_ms) {
        let mut held = schedule.to_vec();
        let kind = fault.kind();
        held.push(TimedFault {
            at_ms: from_ms,
            fault,
        });
        out.push(Proposal {
            schedule: held,
            why: format!(
                "{writer}'s stale write landed at {landed:.0} ms, after token {newer}'s \
                 first write ({taken:.0} ms): {holder}'s first write delayed by a {} of \
                 {hold_ms:.0} ms from {from_ms:.0} ms",
                kind.name()
            ),
            refined: true,
        });
    }
    out
}

/// What refinements read of a history.
#[derive(Default)]
struct Windows {
    /// When each (scope, token) was granted.
    granted: BTreeMap<(String, u64), f64>,
    /// When the storage first took each (scope, token), in a write or a fence.
    first_taken: BTreeMap<(String, u64), f64>,
    /// Who first wrote (or fenced) with each (scope, token), and when that write was sent.
    first_writer: BTreeMap<(String, u64), (String, Option<f64>)>,
    /// Stale writes rejected against a newer token: (scope, writer, newer token, when).
    rejected: Vec<(String, String, u64, f64)>,
}

impl Windows {
    fn of(history: &History) -> Windows {
        let ms = |t_ns: u64| t_ns as f64 / NS_PER_MS as f64;
        let mut sent: BTreeMap<OpId, f64> = BTreeMap::new();
        let mut w = Windows::default();
        for event in &history.events {
            match &event.kind {
                EventKind::WriteSent { op, .. } => {
                    sent.insert(*op, ms(event.t_ns));
                }
                EventKind::Granted { scope, token, .. } => {
                    w.granted
                        .entry((scope.clone(), *token))
                        .or_insert(ms(event.t_ns));
                }
                EventKind::WriteAccepted {
                    op,
                    lease_scope,
                    token,
                    writer,
                    ..
                } => w.taken(
                    (lease_scope.clone(), *token),
                    writer,
                    sent.get(op).copied(),
                    ms(event.t_ns),
                ),
                EventKind::Fence {
                    resource,
                    token,
                    writer,
                    verdict: fencesim_model::fence::Verdict::Accepted { .. },
                } => w.taken((resource.clone(), *token), writer, None, ms(event.t_ns)),
                EventKind::WriteRejected {
                    lease_scope,
                    writer,
                    token,
                    accepted: Some(accepted),
                    ..
                } if accepted > token => {
                    w.rejected.push((
                        lease_scope.clone(),
                        writer.clone(),
                        *accepted,
                        ms(event.t_ns),
                    ));
                }
                _ => {}
            }
        }
        w
    }

    fn taken(&mut self, key: (String, u64), writer: &str, sent: Option<f64>, at_ms: f64) {
        self.first_writer
            .entry(key.clone())
            .or_insert_with(|| (writer.to_string(), sent));
        self.first_taken.entry(key).or_insert(at_ms);
    }
}

/// A fault of the profile that keeps `holder`'s writes from the storage for `hold_ms`.
fn holding(profile: &Profile, holder: &str, hold_ms: f64) -> Option<Fault> {
    let fits = |kind: FaultKind| {
        profile.kinds.contains(&kind)
            && profile.max_size.get(&kind).copied().unwrap_or(0.0) >= hold_ms
    };
    let holder = holder.to_string();
    if fits(FaultKind::HoldRelease) {
        Some(Fault::HoldRelease {
            from: holder,
            to: nodes::STORAGE.to_string(),
            duration_ms: hold_ms,
        })
    } else if fits(FaultKind::Partition) {
        Some(Fault::Partition {
            nodes: vec![holder],
            peers: vec![nodes::STORAGE.to_string()],
            one_way: true,
            duration_ms: hold_ms,
        })
    } else if fits(FaultKind::GcPause) {
        Some(Fault::GcPause {
            node: holder,
            duration_ms: hold_ms,
        })
    } else {
        None
    }
}

/// Whether `fault` stops `writer` or holds its messages.
fn delays(fault: &Fault, writer: &str) -> bool {
    match fault {
        Fault::GcPause { node, .. } | Fault::VmSuspend { node, .. } => node == writer,
        Fault::HoldRelease { from, .. } => from == writer,
        Fault::ClockStep { .. }
        | Fault::Partition { .. }
        | Fault::CoordinatorRestart { .. }
        | Fault::StorageRestart { .. }
        | Fault::WorkerCrash { .. }
        | Fault::Panic { .. }
        | Fault::HolderLinkCut { .. } => false,
    }
}

#[cfg(test)]
mod tests {
    use std::collections::{BTreeMap, BTreeSet};

    use fencesim_model::{
        fence::Verdict,
        history::{EventKind, History},
        NS_PER_MS,
    };
    use fencesim_scenario::{Fault, FaultKind, TimedFault};

    use super::*;

    fn profile(kinds: &[(FaultKind, f64)]) -> Profile {
        Profile {
            kinds: kinds.iter().map(|(k, _)| *k).collect::<BTreeSet<_>>(),
            max_size: kinds.iter().copied().collect::<BTreeMap<_, _>>(),
            workers: vec!["worker-0".into(), "worker-1".into()],
            duration_ms: 60_000.0,
        }
    }

    fn granted(token: u64, holder: &str) -> EventKind {
        EventKind::Granted {
            scope: "job-1".into(),
            holder: holder.into(),
            token,
            expires_mono_ms: 0.0,
        }
    }

    fn sent(op: u64, token: u64) -> EventKind {
        EventKind::WriteSent {
            op,
            resource: "job-1".into(),
            token,
        }
    }

    fn accepted(op: u64, token: u64, writer: &str) -> EventKind {
        EventKind::WriteAccepted {
            op,
            resource: "job-1".into(),
            lease_scope: "job-1".into(),
            writer: writer.into(),
            token,
            previous: None,
        }
    }

    /// worker-0 granted token 1 at 0 and renewed at 4 s, writes (sent 5 s, accepted 5.001 s).
    fn one_accepted_write() -> History {
        let mut h = History::default();
        h.push(0, "coordinator", granted(1, "worker-0"));
        h.push(
            4_000 * NS_PER_MS,
            "coordinator",
            EventKind::Renewed {
                scope: "job-1".into(),
                holder: "worker-0".into(),
                token: 1,
            },
        );
        h.push(5_000 * NS_PER_MS, "worker-0", sent(7, 1));
        h.push(5_001 * NS_PER_MS, "storage", accepted(7, 1, "worker-0"));
        h
    }

    #[test]
    fn a_pause_is_proposed_from_just_before_the_write_to_past_the_lease_expiry() {
        let profile = profile(&[(FaultKind::GcPause, 20_000.0)]);
        let proposals = proposals(&profile, 10_000.0, &[], &one_accepted_write());
        // One accepted write, two overshoots, one kind of the profile.
        assert_eq!(proposals.len(), OVERSHOOTS, "{proposals:#?}");
        for proposal in &proposals {
            assert!(!proposal.refined);
            let [timed] = proposal.schedule.as_slice() else {
                panic!("one fault added to an empty schedule")
            };
            assert_eq!(timed.at_ms, 4_999.0);
            let Fault::GcPause { node, duration_ms } = &timed.fault else {
                panic!("{timed:?}")
            };
            assert_eq!(node, "worker-0");
            // The lease was renewed at 4 s: it expires at 14 s, 9,001 ms after the pause
            // begins; the overshoot is below the TTL.
            assert!((9_001.0..19_001.0).contains(duration_ms), "{duration_ms}");
        }
        assert_ne!(proposals[0].schedule, proposals[1].schedule);
    }

    /// The stretch is sized from the renewal before the write (4 s), not one after it (8 s):
    /// each pause lasts exactly to the expiry 14 s, 9,001 ms after it begins, plus its
    /// overshoot of the TTL.
    #[test]
    fn a_stretch_is_sized_from_the_renewal_before_the_write() {
        let mut history = one_accepted_write();
        history.push(
            8_000 * NS_PER_MS,
            "coordinator",
            EventKind::Renewed {
                scope: "job-1".into(),
                holder: "worker-0".into(),
                token: 1,
            },
        );
        let profile = profile(&[(FaultKind::GcPause, 20_000.0)]);
        let durations: Vec<f64> = proposals(&profile, 10_000.0, &[], &history)
            .iter()
            .map(|proposal| proposal.schedule[0].fault.duration_ms())
            .collect();
        let expected: Vec<f64> = (0..OVERSHOOTS)
            .map(|k| 9_001.0 + spread(k) * 10_000.0)
            .collect();
        assert_eq!(durations, expected);
    }

    #[test]
    fn only_the_profiles_kinds_and_sizes_are_proposed() {
        // No fault of the profile can outlast the lease: nothing to propose.
        let short = profile(&[(FaultKind::GcPause, 5_000.0)]);
        assert!(proposals(&short, 10_000.0, &[], &one_accepted_write()).is_empty());
        let none = profile(&[(FaultKind::Partition, 20_000.0)]);
        assert!(proposals(&none, 10_000.0, &[], &one_accepted_write()).is_empty());
        // A profile with restarts proposes them (a token source or a store that forgets).
        let restarts = profile(&[
            (FaultKind::CoordinatorRestart, 2_000.0),
            (FaultKind::StorageRestart, 2_000.0),
        ]);
        let kinds: Vec<FaultKind> = proposals(&restarts, 10_000.0, &[], &one_accepted_write())
            .iter()
            .map(|p| p.schedule[0].fault.kind())
            .collect();
        assert_eq!(
            kinds,
            [FaultKind::CoordinatorRestart, FaultKind::StorageRestart]
        );
    }

    /// worker-0 paused from 1 s to 12 s; worker-1 granted token 2 at 11 s, its first write
    /// sent at 11.4 s and accepted at 11.5 s; worker-0's stale write rejected at 12 s.
    fn a_stale_write_rejected_after_the_newer_write() -> (Vec<TimedFault>, History) {
        let schedule = vec![TimedFault {
            at_ms: 1_000.0,
            fault: Fault::GcPause {
                node: "worker-0".into(),
                duration_ms: 11_000.0,
            },
        }];
        let mut h = History::default();
        h.push(0, "coordinator", granted(1, "worker-0"));
        h.push(11_000 * NS_PER_MS, "coordinator", granted(2, "worker-1"));
        h.push(11_400 * NS_PER_MS, "worker-1", sent(8, 2));
        h.push(11_500 * NS_PER_MS, "storage", accepted(8, 2, "worker-1"));
        h.push(
            12_000 * NS_PER_MS,
            "storage",
            EventKind::WriteRejected {
                op: 3,
                resource: "job-1".into(),
                lease_scope: "job-1".into(),
                writer: "worker-0".into(),
                token: 1,
                accepted: Some(2),
                reason: "stale".into(),
            },
        );
        (schedule, h)
    }

    #[test]
    fn a_stale_write_that_landed_too_late_is_re_aimed_at_the_grants_window() {
        let (schedule, history) = a_stale_write_rejected_after_the_newer_write();
        let profile = profile(&[
            (FaultKind::GcPause, 20_000.0),
            (FaultKind::HoldRelease, 5_000.0),
        ]);
        let refined: Vec<Proposal> = proposals(&profile, 10_000.0, &schedule, &history)
            .into_iter()
            .filter(|p| p.refined)
            .collect();
        assert_eq!(refined.len(), 2, "{refined:#?}");
        // Shortened: to land midway between the grant (11 s) and the first write (11.5 s).
        assert_eq!(
            refined[0].schedule,
            vec![TimedFault {
                at_ms: 1_000.0,
                fault: Fault::GcPause {
                    node: "worker-0".into(),
                    duration_ms: 10_250.0,
                },
            }]
        );
        // Or worker-1's first write held from just before it was sent until after the stale
        // write (12 s) and 50 ms more.
        assert_eq!(refined[1].schedule.len(), 2);
        assert_eq!(
            refined[1].schedule[1],
            TimedFault {
                at_ms: 11_399.0,
                fault: Fault::HoldRelease {
                    from: "worker-1".into(),
                    to: "storage".into(),
                    duration_ms: 651.0,
                },
            }
        );
    }

    #[test]
    fn a_fence_is_the_newer_holders_first_write_and_a_partition_can_hold_it() {
        let (schedule, mut history) = a_stale_write_rejected_after_the_newer_write();
        // fence-on-acquire: worker-1's fence lands at 11.2 s, before its write.
        let fence = fencesim_model::history::Event {
            t_ns: 11_200 * NS_PER_MS,
            node: "storage".into(),
            kind: EventKind::Fence {
                resource: "job-1".into(),
                writer: "worker-1".into(),
                token: 2,
                verdict: Verdict::Accepted { previous: Some(1) },
            },
        };
        history.events.insert(2, fence);
        let profile = profile(&[(FaultKind::Partition, 8_000.0)]);
        let refined = proposals(&profile, 10_000.0, &schedule, &history);
        // No pause to shorten in this profile's kinds? The pause is in the schedule: it is
        // shortened to land midway between the grant and the fence (11.1 s).
        assert_eq!(
            refined[0].schedule[0].fault,
            Fault::GcPause {
                node: "worker-0".into(),
                duration_ms: 10_100.0,
            }
        );
        // The fence has no send time: held from the grant, by a one-way partition.
        assert_eq!(
            refined[1].schedule[1],
            TimedFault {
                at_ms: 11_000.0,
                fault: Fault::Partition {
                    nodes: vec!["worker-1".into()],
                    peers: vec!["storage".into()],
                    one_way: true,
                    duration_ms: 1_050.0,
                },
            }
        );
    }
}
