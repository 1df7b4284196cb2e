//! `fencesim replay`: one seed again, its determinism check, timeline, picture and trace.

use std::{
    path::{Path, PathBuf},
    sync::Arc,
};

use fencesim_scenario::{Override, Scenario};

use crate::common::{replay_line, warn_presets, InputError};
use crate::{args, env_seed};

/// `fencesim replay SCENARIO --seed N`.
#[derive(clap::Args)]
pub(crate) struct ReplayArgs {
    /// The scenario file.
    scenario: PathBuf,
    /// The seed to replay (or FENCESIM_SEED=N / MADSIM_TEST_SEED=N in the environment).
    #[arg(long)]
    seed: Option<u64>,
    /// Also print every resolved option of the scenario.
    #[arg(long)]
    resolved: bool,
    /// Show only these nodes in the timeline and picture (comma-separated).
    #[arg(long, value_delimiter = ',')]
    nodes: Option<Vec<String>>,
    /// Show only START_MS..END_MS of true time in the timeline and picture.
    #[arg(long)]
    window: Option<String>,
    /// Write the timeline picture as SVG to FILE.
    #[arg(long)]
    svg: Option<PathBuf>,
    /// Write the timeline picture as PNG to FILE.
    #[arg(long)]
    png: Option<PathBuf>,
    /// Write Chrome trace-event JSON (ui.perfetto.dev, chrome://tracing) to FILE.
    #[arg(long)]
    perfetto: Option<PathBuf>,
    /// Write the full history as JSON lines to FILE.
    #[arg(long)]
    trace: Option<PathBuf>,
    /// Run the seed twice and fail unless both runs record the same history.
    #[arg(long)]
    check_determinism: bool,
    #[command(flatten)]
    set: args::SetArgs,
}

impl ReplayArgs {
    pub(crate) fn run(self) -> Result<bool, InputError> {
        let set = self.set.overrides()?;
        let (seed, source) = env_seed::replay_seed(self.seed, env_seed::from_process()?)?;
        if let Some(source) = source {
            println!("seed {seed} from {source}");
        }
        replay(
            &self.scenario,
            seed,
            &ReplayView {
                resolved: self.resolved,
                nodes: self.nodes,
                window: self.window.as_deref(),
            },
            &ReplayFiles {
                svg: self.svg,
                png: self.png,
                perfetto: self.perfetto,
                trace: self.trace,
            },
            self.check_determinism,
            &set,
        )
    }
}

/// What the replay shows: `--resolved`, `--nodes`, `--window`.
struct ReplayView<'a> {
    resolved: bool,
    nodes: Option<Vec<String>>,
    window: Option<&'a str>,
}

/// Files the replay writes.
struct ReplayFiles {
    svg: Option<PathBuf>,
    png: Option<PathBuf>,
    perfetto: Option<PathBuf>,
    trace: Option<PathBuf>,
}

/// `START_MS..END_MS` (milliseconds, START < END) as nanoseconds.
fn parse_window(text: &str) -> Result<(u64, u64), InputError> {
    let bad = || {
        InputError(format!(
            "--window: expected START_MS..END_MS with 0 <= START < END, got `{text}`"
        ))
    };
    let (start, end) = text.split_once("..").ok_or_else(bad)?;
    let ms = |part: &str| -> Result<f64, InputError> {
        let ms: f64 = part.parse().map_err(|_| bad())?;
        if ms.is_finite() && ms >= 0.0 {
            Ok(ms)
        } else {
            Err(bad())
        }
    };
    let (start, end) = (ms(start)?, ms(end)?);
    if start >= end {
        return Err(bad());
    }
    Ok((
        fencesim_model::ms_to_ns(start),
        fencesim_model::ms_to_ns(end),
    ))
}

fn replay(
    path: &Path,
    seed: u64,
    view: &ReplayView<'_>,
    files: &ReplayFiles,
    check_determinism: bool,
    set: &[Override],
) -> Result<bool, InputError> {
    let scenario: Arc<Scenario> = Arc::new(fencesim_scenario::load_with(path, set)?);
    warn_presets(path, &scenario);
    let window_ns = view.window.map(parse_window).transpose()?;
    if let Some(nodes) = &view.nodes {
        let mut known = scenario.node_names();
        known.extend([
            fencesim_model::nodes::NET.to_string(),
            fencesim_model::nodes::NEMESIS.to_string(),
        ]);
        if let Some(unknown) = nodes.iter().find(|node| !known.contains(node)) {
            return Err(InputError(format!(
                "--nodes: expected node names among {}, got `{unknown}`",
                known.join(", ")
            )));
        }
    }
    let planned: Vec<fencesim::outputs::Output> = [
        ("--svg", &files.svg),
        ("--png", &files.png),
        ("--perfetto", &files.perfetto),
        ("--trace", &files.trace),
    ]
    .into_iter()
    .filter_map(|(flag, file)| {
        file.as_ref()
            .map(|file| fencesim::outputs::Output::new(flag, file))
    })
    .collect();
    fencesim::outputs::preflight_scenarios(&planned, &[path], None)?;
    let replay = fencesim::replay(&scenario, seed, &fencesim::Components::default());
    // The window is clamped to the run (its last event); one that starts after the run
    // shows nothing and is refused.
    let run_end_ns = replay.run.history.events.last().map_or(0, |e| e.t_ns);
    let window_ns = match window_ns {
        Some((start, _)) if start >= run_end_ns => {
            return Err(InputError(format!(
                "--window: expected a window that starts before the run ends ({} ms), got `{}`",
                run_end_ns as f64 / 1e6,
                view.window.unwrap_or_default()
            )))
        }
        Some((start, end)) => Some((start, end.min(run_end_ns))),
        None => None,
    };
    let text_options = fencesim_views::ReplayTextOptions {
        resolved: view.resolved,
        nodes: view.nodes.clone(),
        window_ns,
    };
    print!(
        "{}",
        replay.text(&text_options, &replay_line(path, seed, set))
    );
    let picture = fencesim_views::PictureOptions {
        window_ns,
        nodes: view.nodes.clone(),
        title: None,
    };
    let picture_error =
        |e: fencesim_views::PictureError| InputError(format!("cannot draw the picture: {}", e.0));
    // Every file staged first, then all renamed together: a signal leaves the old set or
    // the new one.
    let mut set = fencesim::fs::OutputSet::new();
    let mut written = Vec::new();
    let mut stage = |path: &Path, what: &str, bytes: &[u8]| -> Result<(), InputError> {
        set.add(path, bytes)
            .map_err(|e| InputError(format!("{}: cannot write {what}: {e}", path.display())))?;
        written.push(format!("{what} written to {}", path.display()));
        Ok(())
    };
    if let Some(svg) = &files.svg {
        let text = replay.picture_svg(&picture).map_err(picture_error)?;
        stage(svg, "SVG picture", text.as_bytes())?;
    }
    if let Some(png) = &files.png {
        let bytes = replay.picture_png(&picture).map_err(picture_error)?;
        stage(png, "PNG picture", &bytes)?;
    }
    if let Some(perfetto) = &files.perfetto {
        stage(perfetto, "Perfetto trace", replay.perfetto().as_bytes())?;
    }
    if let Some(trace) = &files.trace {
        replay
            .stage_trace(&mut set, trace)
            .map_err(|e| InputError(format!("{}: cannot write trace: {e}", trace.display())))?;
        written.push(format!("trace written to {}", trace.display()));
    }
    set.commit().map_err(|e| InputError(e.to_string()))?;
    for line in written {
        println!("{line}");
    }
    if check_determinism {
        let determinism = replay.check_determinism();
        println!("{determinism}");
        // With --check-determinism the exit code answers that question alone (0 same
        // history, 1 different), whatever the seed violates.
        return Ok(matches!(determinism, fencesim::Determinism::Same { .. }));
    }
    Ok(!replay.failed())
}
