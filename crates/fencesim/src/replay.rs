//! Replaying one seed: the run, its text (timeline, violations with their proof, metrics,
//! trace hash), its trace, and the determinism check, for the built-in stores and a user's
//! own alike.

use std::{io, path::Path, sync::Arc};

use fencesim_model::{history::Event, nodes};
use fencesim_scenario::Scenario;
use fencesim_sim::runner::{run_seed, Components, RunResult};
#[cfg(feature = "pictures")]
use fencesim_views::{PictureError, PictureOptions};
use fencesim_views::{ReplayInput, ReplayTextOptions};

/// One seed of a scenario, run and checked.
pub struct Replay {
    /// The scenario as resolved.
    pub scenario: Arc<Scenario>,
    /// The seed replayed.
    pub seed: u64,
    /// What the run produced: outcome (violations, metrics, trace hash), history, fault plan.
    pub run: RunResult,
    /// The components it ran with (store, worker policy, token source).
    pub components: Components,
}

/// Runs `seed` of `scenario` with `components`: a user's store, worker policy and token
/// source get the same text, pictures and traces as the built-ins.
pub fn replay(scenario: &Arc<Scenario>, seed: u64, components: &Components) -> Replay {
    Replay {
        scenario: scenario.clone(),
        seed,
        run: run_seed(scenario, seed, components),
        components: components.clone(),
    }
}

impl Replay {
    /// Whether the seed failed: a violation, a panic of a simulated node, or a runaway.
    pub fn failed(&self) -> bool {
        let outcome = &self.run.outcome;
        outcome.panic.is_some() || outcome.runaway || !outcome.checked.violations.is_empty()
    }

    /// The columns of the timeline: every process of the scenario, then the nemesis.
    pub fn timeline_nodes(&self) -> Vec<String> {
        let mut nodes = self.scenario.node_names();
        nodes.push(nodes::NEMESIS.to_string());
        nodes
    }

    /// What `fencesim replay` prints: the scenario and its hash, the fault plan, the
    /// per-node timeline with violations marked (runs of routine writes collapsed), each
    /// violation with the events that prove it, the metrics, the trace hash and
    /// `replay_command`; `options` adds the resolved options and filters the timeline.
    pub fn text(&self, options: &ReplayTextOptions, replay_command: &str) -> String {
        let outcome = &self.run.outcome;
        let input = ReplayInput {
            scenario: &self.scenario,
            seed: self.seed,
            plan: &self.run.plan,
            history: &self.run.history,
            checked: &outcome.checked,
            panic: outcome.panic.as_deref(),
            trace_hash: &outcome.trace_hash,
            replay_command,
        };
        fencesim_views::replay_text(&input, options)
    }

    /// The timeline picture as SVG (see `fencesim_views::picture`; `pictures` feature).
    #[cfg(feature = "pictures")]
    pub fn picture_svg(&self, options: &PictureOptions) -> Result<String, PictureError> {
        fencesim_views::picture_svg(
            &self.run.history,
            &self.run.outcome.checked.violations,
            &self.timeline_nodes(),
            Some(&self.run.plan),
            &self.picture_options(options),
        )
    }

    /// The timeline picture as PNG bytes (`pictures` feature).
    #[cfg(feature = "pictures")]
    pub fn picture_png(&self, options: &PictureOptions) -> Result<Vec<u8>, PictureError> {
        fencesim_views::picture_png(
            &self.run.history,
            &self.run.outcome.checked.violations,
            &self.timeline_nodes(),
            Some(&self.run.plan),
            &self.picture_options(options),
        )
    }

    /// `options` with a title naming the scenario and seed unless it has one.
    #[cfg(feature = "pictures")]
    fn picture_options(&self, options: &PictureOptions) -> PictureOptions {
        let mut options = options.clone();
        if options.title.is_none() {
            options.title = Some(format!("{}, seed {}", self.scenario.name, self.seed));
        }
        options
    }

    /// The run as Chrome trace-event JSON, for ui.perfetto.dev and chrome://tracing.
    pub fn perfetto(&self) -> String {
        fencesim_views::perfetto_json(
            &self.run.history,
            &self.run.outcome.checked.violations,
            &self.timeline_nodes(),
        )
    }

    /// Writes the history as JSON lines (the bytes the trace hash is computed over).
    pub fn write_trace(&self, path: &Path) -> io::Result<()> {
        crate::trace::write_jsonl(&self.run.history, path)
    }

    /// Stages the history as JSON lines for `path` in `set` (written at its commit, with the
    /// command's other outputs).
    pub fn stage_trace(&self, set: &mut crate::fs::OutputSet, path: &Path) -> io::Result<()> {
        set.add_with(path, |writer| {
            crate::trace::jsonl_into(&self.run.history, writer)
        })
    }

    /// The history as JSON lines (what [`Replay::write_trace`] writes).
    pub fn trace(&self) -> String {
        self.run.history.to_jsonl()
    }

    /// Runs the seed again with the same components and compares the two histories.
    pub fn check_determinism(&self) -> Determinism {
        compare(self, &run_seed(&self.scenario, self.seed, &self.components))
    }
}

/// What running a seed a second time showed.
#[derive(Clone, Debug, PartialEq)]
pub enum Determinism {
    /// Both runs recorded the same history.
    Same {
        /// The trace hash both runs gave.
        trace_hash: String,
    },
    /// The runs diverged.
    Differs {
        /// The two trace hashes, first run first.
        trace_hashes: (String, String),
        /// Index of the first event that differs.
        index: usize,
        /// That event in each run (`None`: that run's history had already ended).
        events: Box<(Option<Event>, Option<Event>)>,
    },
}

impl std::fmt::Display for Determinism {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Determinism::Same { trace_hash } => write!(
                f,
                "determinism: second run gave the same trace hash ({trace_hash})"
            ),
            Determinism::Differs {
                trace_hashes,
                index,
                events,
            } => {
                let show = |event: &Option<Event>| match event {
                    Some(event) => fencesim_model::history::wire::event_line(event),
                    None => "(history already ended)".to_string(),
                };
                write!(
                    f,
                    "NONDETERMINISM: trace hashes {} and {}; first difference at event #{index}:\n  first run:  {}\n  second run: {}",
                    trace_hashes.0,
                    trace_hashes.1,
                    show(&events.0),
                    show(&events.1)
                )
            }
        }
    }
}

fn compare(replay: &Replay, again: &RunResult) -> Determinism {
    let (first, second) = (&replay.run.history, &again.history);
    match first.first_difference(second) {
        None => Determinism::Same {
            trace_hash: replay.run.outcome.trace_hash.clone(),
        },
        Some(index) => Determinism::Differs {
            trace_hashes: (
                replay.run.outcome.trace_hash.clone(),
                again.outcome.trace_hash.clone(),
            ),
            index,
            events: Box::new((
                first.events.get(index).cloned(),
                second.events.get(index).cloned(),
            )),
        },
    }
}
