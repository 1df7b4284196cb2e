//! Progress for people, one implementation for `run`, `check` and `tune`: an indicatif bar
//! on stderr with the rate (seeds/s or runs/s) and the ETA, redrawn at most [`REDRAW_HZ`]
//! times a second, drawn only when stderr is a terminal. Off a terminal each command keeps
//! its plain lines ([`Plain`]). Nothing here ever writes to stdout: the tables and reports
//! there are the same bytes with or without a terminal.

use std::{
    io::IsTerminal,
    sync::{
        atomic::{AtomicU64, Ordering},
        Mutex,
    },
};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressState, ProgressStyle};

/// The most redraws a second: without a bound, a fast sweep redraws once per seed (1,058
/// redraws for 1,050 seeds of the old hand-rolled bar).
pub(crate) const REDRAW_HZ: u8 = 10;

/// What a command prints on stderr when it is not a terminal (no bar is drawn then).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Plain {
    /// Nothing (`check`: its table rows are the plain lines).
    Nothing,
    /// `  D/T UNIT` at every 100th and at the last (`run`).
    EveryHundred,
    /// `  D/T UNIT` at every tenth of the total and at the last (`tune`, per round).
    EveryTenth,
}

impl Plain {
    /// Whether the plain line is due when `done` of `total` have finished.
    pub(crate) fn due(self, done: u64, total: u64) -> bool {
        match self {
            Plain::Nothing => false,
            Plain::EveryHundred => done.is_multiple_of(100) || done == total,
            Plain::EveryTenth => {
                let total = total.max(1);
                done == total || done * 10 / total != done.saturating_sub(1) * 10 / total
            }
        }
    }
}

/// The bar of the progress currently drawn, if any: the signal handler clears it before it
/// prints, so its last words do not land in the middle of a bar.
static ACTIVE: Mutex<Option<(u64, ProgressBar)>> = Mutex::new(None);

/// Numbers the drawn bars, so a bar's drop unregisters only itself.
static NEXT_ID: AtomicU64 = AtomicU64::new(0);

/// Clears the bar being drawn, if any (for the signal handler).
pub(crate) fn clear_active() {
    let active = ACTIVE
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    if let Some((_, bar)) = active.as_ref() {
        bar.finish_and_clear();
    }
}

/// One command's progress: counts finished seeds (or runs) from any thread.
pub(crate) struct Progress {
    bar: ProgressBar,
    /// This bar's number in [`ACTIVE`] (when drawn).
    id: u64,
    plain: Plain,
    unit: &'static str,
    done: AtomicU64,
    total: AtomicU64,
}

/// "scenario 2 of 55: NAME": what `check`'s bar says while a scenario runs.
pub(crate) fn scenario_message(position: usize, count: usize, name: &str) -> String {
    format!("scenario {} of {count}: {name}", position + 1)
}

impl Progress {
    /// Progress counted in `unit` (`seeds`, `runs`): a bar on stderr when it is a terminal,
    /// else `plain` lines.
    pub(crate) fn new(unit: &'static str, plain: Plain) -> Progress {
        let target = if std::io::stderr().is_terminal() {
            ProgressDrawTarget::stderr_with_hz(REDRAW_HZ)
        } else {
            ProgressDrawTarget::hidden()
        };
        Progress::with_target(target, unit, plain)
    }

    /// Progress drawn to `target` (a test's counting terminal, or hidden).
    pub(crate) fn with_target(
        target: ProgressDrawTarget,
        unit: &'static str,
        plain: Plain,
    ) -> Progress {
        let drawn = !target.is_hidden();
        let bar = ProgressBar::with_draw_target(Some(0), target);
        let rate = move |state: &ProgressState, out: &mut dyn std::fmt::Write| {
            let _ = write!(out, "{:.1} {unit}/s", state.per_sec());
        };
        // Two lines, so a long scenario name never wraps the bar on an 80-column terminal.
        let style = ProgressStyle::with_template(
            "{wide_msg}\n[{bar:30}] {pos}/{len} {unit}, {rate}, ETA {eta}",
        )
        .expect("a valid template")
        .with_key("rate", rate)
        .with_key(
            "unit",
            move |_: &ProgressState, out: &mut dyn std::fmt::Write| {
                let _ = out.write_str(unit);
            },
        )
        .progress_chars("#>.");
        bar.set_style(style);
        let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
        if drawn {
            *ACTIVE
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner()) = Some((id, bar.clone()));
        }
        Progress {
            bar,
            id,
            plain,
            unit,
            done: AtomicU64::new(0),
            total: AtomicU64::new(0),
        }
    }

    /// Whether a bar is drawn (stderr is a terminal).
    pub(crate) fn is_drawn(&self) -> bool {
        !self.bar.is_hidden()
    }

    /// Starts counting `total` anew, the bar saying `message` (its rate and ETA restart).
    pub(crate) fn start(&self, total: u64, message: String) {
        self.done.store(0, Ordering::Relaxed);
        self.total.store(total, Ordering::Relaxed);
        self.bar.set_length(total);
        self.bar.set_message(message);
        self.bar.reset();
    }

    /// One more finished; returns how many have.
    pub(crate) fn inc(&self) -> u64 {
        let done = self.done.fetch_add(1, Ordering::Relaxed) + 1;
        self.shown(done, self.total.load(Ordering::Relaxed));
        self.bar.inc(1);
        done
    }

    /// `done` of `total` finished, as a caller that counts itself reports it (`tune`, whose
    /// every adaptive round counts from 1 again: a count below the last one starts anew).
    pub(crate) fn set(&self, done: u64, total: u64) {
        let before = self.done.swap(done, Ordering::Relaxed);
        if done < before || total != self.total.swap(total, Ordering::Relaxed) {
            self.bar.reset();
            self.bar.set_length(total);
        }
        self.shown(done, total);
        self.bar.set_position(done);
    }

    /// The plain line off a terminal, when due.
    fn shown(&self, done: u64, total: u64) {
        if !self.is_drawn() && self.plain.due(done, total) {
            eprintln!("  {done}/{total} {}", self.unit);
        }
    }

    /// Prints `line` on stderr without tearing the bar (it is hidden meanwhile).
    pub(crate) fn eprintln(&self, line: &str) {
        self.bar.suspend(|| eprintln!("{line}"));
    }

    /// Removes the bar from the terminal (before a table row is printed below it).
    pub(crate) fn clear(&self) {
        self.bar.finish_and_clear();
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.bar.finish_and_clear();
        let mut active = ACTIVE
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if active.as_ref().is_some_and(|(id, _)| *id == self.id) {
            *active = None;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use indicatif::TermLike;
    use std::sync::Arc;

    /// A terminal that counts the bar's draws (each ends with a flush) and keeps the text
    /// of the last one.
    #[derive(Debug, Default)]
    struct Counting {
        draws: AtomicU64,
        /// The text written since the last flush, and the last flushed one.
        pending: Mutex<String>,
        text: Mutex<String>,
    }

    #[derive(Debug, Clone)]
    struct Term(Arc<Counting>);

    impl TermLike for Term {
        fn width(&self) -> u16 {
            160
        }
        fn move_cursor_up(&self, _: usize) -> std::io::Result<()> {
            Ok(())
        }
        fn move_cursor_down(&self, _: usize) -> std::io::Result<()> {
            Ok(())
        }
        fn move_cursor_right(&self, _: usize) -> std::io::Result<()> {
            Ok(())
        }
        fn move_cursor_left(&self, _: usize) -> std::io::Result<()> {
            Ok(())
        }
        fn write_line(&self, s: &str) -> std::io::Result<()> {
            self.write_str(s)
        }
        fn write_str(&self, s: &str) -> std::io::Result<()> {
            self.0.pending.lock().unwrap().push_str(s);
            Ok(())
        }
        fn clear_line(&self) -> std::io::Result<()> {
            Ok(())
        }
        fn flush(&self) -> std::io::Result<()> {
            let text = std::mem::take(&mut *self.0.pending.lock().unwrap());
            if !text.trim().is_empty() {
                self.0.draws.fetch_add(1, Ordering::Relaxed);
                *self.0.text.lock().unwrap() = text;
            }
            Ok(())
        }
    }

    fn counting(unit: &'static str) -> (Progress, Arc<Counting>) {
        let seen = Arc::new(Counting::default());
        let target = ProgressDrawTarget::term_like_with_hz(Box::new(Term(seen.clone())), REDRAW_HZ);
        (Progress::with_target(target, unit, Plain::Nothing), seen)
    }

    #[test]
    fn redraws_are_bounded_by_the_rate_not_by_the_seeds() {
        let (progress, seen) = counting("seeds");
        progress.start(100_000, scenario_message(0, 3, "gc-pause"));
        let started = crate::common::wall_now();
        // 100,000 seeds over about a second.
        for i in 0..100_000 {
            progress.inc();
            if i % 1000 == 0 {
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
        }
        let seconds = started.elapsed().as_secs_f64();
        let draws = seen.draws.load(Ordering::Relaxed);
        // At most REDRAW_HZ a second after indicatif's initial burst of 20, whatever the
        // seed count (unbounded, it would be one draw per seed).
        let bound = 20.0 + seconds * f64::from(REDRAW_HZ) + 2.0;
        assert!(
            (draws as f64) <= bound,
            "{draws} draws for 100000 seeds in {seconds:.2} s"
        );
        assert!(draws >= 1, "drawn at least once");
    }

    #[test]
    fn the_bar_shows_the_scenario_its_rate_and_its_eta() {
        let (progress, seen) = counting("seeds");
        progress.start(10, scenario_message(1, 3, "gc-pause-textbook-none"));
        progress.inc();
        let text = seen.text.lock().unwrap().clone();
        for part in [
            "scenario 2 of 3: gc-pause-textbook-none",
            "1/10 seeds",
            "seeds/s",
            "ETA ",
        ] {
            assert!(text.contains(part), "{part:?} in {text:?}");
        }
    }

    #[test]
    fn tune_rounds_restart_the_count() {
        let (progress, seen) = counting("runs");
        progress.set(1, 40);
        progress.set(40, 40);
        progress.set(1, 8); // the next adaptive round
        assert_eq!(progress.bar.position(), 1);
        assert_eq!(progress.bar.length(), Some(8));
        let text = seen.text.lock().unwrap().clone();
        assert!(text.contains("runs/s"), "{text}");
    }

    #[test]
    fn off_a_terminal_nothing_is_drawn() {
        let progress = Progress::with_target(ProgressDrawTarget::hidden(), "seeds", Plain::Nothing);
        assert!(!progress.is_drawn());
    }

    #[test]
    fn plain_lines_keep_each_commands_old_cadence() {
        let lines = |plain: Plain, total: u64| -> Vec<u64> {
            (1..=total).filter(|&d| plain.due(d, total)).collect()
        };
        assert!(lines(Plain::Nothing, 1000).is_empty());
        assert_eq!(lines(Plain::EveryHundred, 250), vec![100, 200, 250]);
        assert_eq!(lines(Plain::EveryHundred, 200), vec![100, 200]);
        assert_eq!(
            lines(Plain::EveryTenth, 100),
            vec![10, 20, 30, 40, 50, 60, 70, 80, 90, 100]
        );
        assert_eq!(lines(Plain::EveryTenth, 3), vec![1, 2, 3]);
        assert_eq!(lines(Plain::EveryTenth, 1), vec![1]);
    }
}
