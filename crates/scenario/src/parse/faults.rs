//! The file's shape of fault entries (`[[faults.schedule]]`, `[[faults.random]]`) and their
//! validation into [`crate::fault`]'s types: the parse layer reads fault kinds, never the
//! other way round.

use std::collections::BTreeMap;

use super::{join, Ctx, RawRandom, RawScheduled, Result};
use crate::{
    fault::{Fault, FaultKind, RandomFault, Targets, TimedFault},
    ScenarioError,
};

impl Ctx<'_> {
    /// A node this kind may target: any node, or a worker for kinds that need one.
    fn target(&self, kind: FaultKind, field: &str, name: &str, names: &[String]) -> Result<String> {
        match kind.targets() {
            Targets::Workers => self.worker(field, name, names.len() - 2),
            _ => self.node(field, name, names),
        }
    }

    pub(crate) fn scheduled(
        &self,
        path: &str,
        raw: RawScheduled,
        duration_ms: u64,
        names: &[String],
    ) -> Result<TimedFault> {
        let field = |key: &str| join(path, key);
        let at_ms = self.finite(&field("at_ms"), self.required(&field("at_ms"), raw.at_ms)?)?;
        if !(0.0..duration_ms as f64).contains(&at_ms) {
            return Err(self.error(
                &field("at_ms"),
                format!(
                    "expected a time inside the safety phase [0, {duration_ms}) ms, got {at_ms}"
                ),
            ));
        }
        let kind = self.required(&field("kind"), raw.kind)?;
        self.only_schedule_keys(path, kind, &raw)?;
        let node = || -> Result<String> {
            let name = self.required(&field("node"), raw.node.clone())?;
            self.target(kind, &field("node"), &name, names)
        };
        let duration = || -> Result<f64> {
            let duration_ms = self.required(&field("duration_ms"), raw.duration_ms)?;
            self.positive_f64(&field("duration_ms"), duration_ms, "milliseconds")
        };
        let fault = match kind {
            FaultKind::GcPause => Fault::GcPause {
                node: node()?,
                duration_ms: duration()?,
            },
            FaultKind::VmSuspend => Fault::VmSuspend {
                node: node()?,
                duration_ms: duration()?,
            },
            FaultKind::WorkerCrash => Fault::WorkerCrash {
                node: node()?,
                duration_ms: duration()?,
            },
            FaultKind::ClockStep => Fault::ClockStep {
                node: node()?,
                delta_ms: self.clock_step_ms(path, raw.delta_ms)?,
            },
            FaultKind::Panic => Fault::Panic { node: node()? },
            FaultKind::Partition => {
                let (nodes, peers) = self.partition_sides(path, &raw, names)?;
                Fault::Partition {
                    nodes,
                    peers,
                    one_way: raw.one_way.unwrap_or(false),
                    duration_ms: duration()?,
                }
            }
            FaultKind::HoldRelease => {
                let (from, to) = self.hold_ends(path, &raw, names)?;
                Fault::HoldRelease {
                    from,
                    to,
                    duration_ms: duration()?,
                }
            }
            FaultKind::CoordinatorRestart => Fault::CoordinatorRestart {
                duration_ms: duration()?,
            },
            FaultKind::StorageRestart => Fault::StorageRestart {
                duration_ms: duration()?,
            },
            FaultKind::HolderLinkCut => Fault::HolderLinkCut {
                duration_ms: duration()?,
            },
        };
        Ok(TimedFault { at_ms, fault })
    }

    /// Refuses a key `kind` does not take in a `[[faults.schedule]]` entry.
    fn only_schedule_keys(&self, path: &str, kind: FaultKind, raw: &RawScheduled) -> Result<()> {
        self.only_keys(
            path,
            &format!("kind = \"{kind}\""),
            kind.schedule_keys(),
            &[
                ("node", raw.node.is_some()),
                ("duration_ms", raw.duration_ms.is_some()),
                ("delta_ms", raw.delta_ms.is_some()),
                ("nodes", raw.nodes.is_some()),
                ("peers", raw.peers.is_some()),
                ("one_way", raw.one_way.is_some()),
                ("from", raw.from.is_some()),
                ("to", raw.to.is_some()),
            ],
        )
    }

    /// A `clock-step`'s `delta_ms`: a non-zero step within the bounds.
    fn clock_step_ms(&self, path: &str, delta_ms: Option<f64>) -> Result<f64> {
        let field = |key: &str| join(path, key);
        let delta_ms = self.bounded_ms_f64(
            &field("delta_ms"),
            self.required(&field("delta_ms"), delta_ms)?,
        )?;
        if delta_ms == 0.0 {
            return Err(self.error(
                &field("delta_ms"),
                "expected a non-zero step in milliseconds, got 0",
            ));
        }
        Ok(delta_ms)
    }

    /// A `partition`'s `(nodes, peers)`: distinct known nodes, none on both sides.
    fn partition_sides(
        &self,
        path: &str,
        raw: &RawScheduled,
        names: &[String],
    ) -> Result<(Vec<String>, Vec<String>)> {
        let field = |key: &str| join(path, key);
        let nodes = self.required(&field("nodes"), raw.nodes.clone())?;
        if nodes.is_empty() {
            return Err(self.error(
                &field("nodes"),
                "expected at least one node to isolate, got []",
            ));
        }
        let peers = raw.peers.clone().unwrap_or_default();
        for (index, name) in nodes.iter().enumerate() {
            let item = format!("{}[{index}]", field("nodes"));
            self.node(&item, name, names)?;
            if nodes[..index].contains(name) {
                return Err(self.error(
                    &item,
                    format!("expected distinct nodes, got {name:?} twice"),
                ));
            }
        }
        for (index, name) in peers.iter().enumerate() {
            let item = format!("{}[{index}]", field("peers"));
            self.node(&item, name, names)?;
            if nodes.contains(name) {
                return Err(self.error(
                    &item,
                    format!("expected a node not in `nodes`, got {name:?}"),
                ));
            }
        }
        Ok((nodes, peers))
    }

    /// A `hold-release`'s `(from, to)`: two different known nodes.
    fn hold_ends(
        &self,
        path: &str,
        raw: &RawScheduled,
        names: &[String],
    ) -> Result<(String, String)> {
        let field = |key: &str| join(path, key);
        let from = self.required(&field("from"), raw.from.clone())?;
        let from = self.node(&field("from"), &from, names)?;
        let to = self.required(&field("to"), raw.to.clone())?;
        let to = self.node(&field("to"), &to, names)?;
        if from == to {
            return Err(self.error(
                &field("to"),
                format!("expected a node other than `from`, got {to:?}"),
            ));
        }
        Ok((from, to))
    }

    /// A node cannot be paused, suspended or crashed twice at once: the simulator would have
    /// to invent which one ends first. Two entries overlap when each starts before the other
    /// ends (`[at, end)` intervals; an empty one overlaps only an interval strictly around
    /// it). Sort and sweep per node: O(n log n), so a schedule at the list limit validates
    /// in milliseconds (the pairwise check took 13 s for 40 000 entries).
    pub(crate) fn check_overlaps(&self, schedule: &[TimedFault]) -> Result<()> {
        let mut by_node: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
        for (index, timed) in schedule.iter().enumerate() {
            if let Some(node) = timed.fault.stopped_node() {
                by_node.entry(node).or_default().push(index);
            }
        }
        for (node, mut indices) in by_node {
            indices.sort_by(|&a, &b| {
                schedule[a]
                    .at_ms
                    .total_cmp(&schedule[b].at_ms)
                    .then(a.cmp(&b))
            });
            // The entry with the latest end among those starting strictly earlier.
            let mut before: Option<usize> = None;
            let mut group_start = 0;
            while group_start < indices.len() {
                let at_ms = schedule[indices[group_start]].at_ms;
                let group_end = indices[group_start..]
                    .iter()
                    .position(|&i| schedule[i].at_ms != at_ms)
                    .map_or(indices.len(), |n| group_start + n);
                let group = &indices[group_start..group_end];
                // A non-empty entry earlier in this group (same start: they overlap).
                let mut same_start: Option<usize> = None;
                for &index in group {
                    let empty = schedule[index].end_ms() <= at_ms;
                    let witness = before
                        .filter(|&b| at_ms < schedule[b].end_ms())
                        .or(if empty { None } else { same_start });
                    if let Some(other) = witness {
                        return Err(self.overlap_error(
                            schedule,
                            node,
                            other.min(index),
                            other.max(index),
                        ));
                    }
                    if !empty && same_start.is_none() {
                        same_start = Some(index);
                    }
                }
                for &index in group {
                    if before.is_none_or(|b| schedule[index].end_ms() > schedule[b].end_ms()) {
                        before = Some(index);
                    }
                }
                group_start = group_end;
            }
        }
        Ok(())
    }

    fn overlap_error(
        &self,
        schedule: &[TimedFault],
        node: &str,
        earlier_index: usize,
        later_index: usize,
    ) -> ScenarioError {
        let (earlier, later) = (&schedule[earlier_index], &schedule[later_index]);
        self.error(
            &format!("faults.schedule[{later_index}]"),
            format!(
                "expected no overlap with faults.schedule[{earlier_index}] ({} on {node} over {}..{} ms), got {} over {}..{} ms",
                earlier.fault.kind(),
                earlier.at_ms,
                earlier.end_ms(),
                later.fault.kind(),
                later.at_ms,
                later.end_ms()
            ),
        )
    }

    pub(crate) fn random(
        &self,
        path: &str,
        raw: RawRandom,
        names: &[String],
    ) -> Result<RandomFault> {
        let field = |key: &str| join(path, key);
        let kind = self.required(&field("kind"), raw.kind)?;
        if !kind.can_be_random() {
            return Err(self.error(
                &field("kind"),
                format!("expected a random fault kind other than \"{kind}\" (schedule a {kind} explicitly), got \"{kind}\""),
            ));
        }
        let rate_per_min = self.required(&field("rate_per_min"), raw.rate_per_min)?;
        let rate_per_min = self.positive_f64(
            &field("rate_per_min"),
            rate_per_min,
            "occurrences per minute",
        )?;
        if rate_per_min > crate::limits::MAX_RATE_PER_MIN {
            return Err(self.error(
                &field("rate_per_min"),
                format!(
                    "expected at most {} occurrences per minute, got {rate_per_min}",
                    crate::limits::MAX_RATE_PER_MIN
                ),
            ));
        }
        let duration_ms = self.dist(
            &field("duration_ms"),
            self.required(&field("duration_ms"), raw.duration_ms)?,
        )?;
        let nodes = raw.nodes.unwrap_or_default();
        for (index, name) in nodes.iter().enumerate() {
            let item = format!("{}[{index}]", field("nodes"));
            self.target(kind, &item, name, names)?;
        }
        let one_way_probability = match raw.one_way_probability {
            Some(probability) if kind != FaultKind::Partition => {
                return Err(self.error(
                    &field("one_way_probability"),
                    format!("expected no one_way_probability with kind = \"{kind}\" (partition only), got {probability}"),
                ))
            }
            Some(probability) => self.probability(&field("one_way_probability"), probability, true)?,
            None => 0.0,
        };
        Ok(RandomFault {
            kind,
            rate_per_min,
            duration_ms,
            nodes,
            one_way_probability,
        })
    }
}

#[cfg(test)]
mod overlap_tests {
    use super::*;

    /// The pairwise rule the sweep replaces: is any entry overlapped by an earlier one?
    fn pairwise(schedule: &[TimedFault]) -> bool {
        schedule.iter().enumerate().any(|(j, later)| {
            schedule[..j].iter().any(|earlier| {
                later.fault.stopped_node().is_some()
                    && earlier.fault.stopped_node() == later.fault.stopped_node()
                    && later.at_ms < earlier.end_ms()
                    && earlier.at_ms < later.end_ms()
            })
        })
    }

    fn pause(node: usize, at_ms: f64, duration_ms: f64) -> TimedFault {
        TimedFault {
            at_ms,
            fault: Fault::GcPause {
                node: format!("worker-{node}"),
                duration_ms,
            },
        }
    }

    fn ctx_check(schedule: &[TimedFault]) -> Result<()> {
        let doc = toml_edit::ImDocument::parse("").unwrap();
        let ctx = Ctx {
            file: "test.toml",
            text: "",
            doc,
        };
        ctx.check_overlaps(schedule)
    }

    /// A small LCG: the test needs variety, not quality.
    struct Lcg(u64);
    impl Lcg {
        fn below(&mut self, n: u64) -> u64 {
            self.0 = self
                .0
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            (self.0 >> 33) % n
        }
    }

    #[test]
    fn the_sweep_finds_an_overlap_exactly_when_the_pairwise_rule_does() {
        let mut rng = Lcg(9);
        let (mut with, mut without) = (0, 0);
        for _ in 0..20_000 {
            let len = 1 + rng.below(6) as usize;
            let schedule: Vec<TimedFault> = (0..len)
                .map(|_| {
                    // Small grids so equal starts, back-to-back entries and empty ones occur.
                    pause(
                        rng.below(2) as usize,
                        rng.below(8) as f64,
                        rng.below(4) as f64,
                    )
                })
                .collect();
            let expected = pairwise(&schedule);
            let found = ctx_check(&schedule);
            assert_eq!(found.is_err(), expected, "{schedule:?}: {found:?}");
            if expected {
                with += 1;
            } else {
                without += 1;
            }
        }
        assert!(with > 1_000 && without > 1_000, "{with} / {without}");
    }

    /// `cargo test --release -p fencesim-scenario --lib overlap_tests::bench -- --ignored
    /// --nocapture`: the sweep and the pairwise rule on 1 000 (the list limit) and 40 000
    /// back-to-back pauses (no overlap: the worst case, every pair is looked at).
    #[test]
    #[ignore = "benchmark: prints timings"]
    fn bench() {
        for len in [1_000, 40_000] {
            let schedule: Vec<TimedFault> = (0..len)
                .map(|i| pause(i % 4, (i / 4) as f64 * 10.0, 10.0))
                .collect();
            #[allow(clippy::disallowed_methods)] // wall time of a benchmark, not a simulation
            let started = std::time::Instant::now();
            ctx_check(&schedule).unwrap();
            let sweep = started.elapsed();
            #[allow(clippy::disallowed_methods)]
            let started = std::time::Instant::now();
            assert!(!pairwise(&schedule));
            let pairwise = started.elapsed();
            println!("{len} entries: sort + sweep {sweep:?}, pairwise {pairwise:?}");
        }
    }
}
