//! Per-node clocks on top of the simulator's single true clock.
//!
//! madsim has one global clock. A node's own clocks are modelled here as pure functions of
//! true time `t` (nanoseconds since the run began) and the node's clock plan, which is known
//! in advance because fault plans are data:
//!
//! - `mono(t)` runs at rate `1 + drift_ppm/1e6`, never steps, and stops while the node is
//!   VM-suspended (a GC pause does not stop it).
//! - `wall(t)` = epoch + offset + drifted running time + every step taken at or before `t`.
//!   Wall time is not frozen by a suspend: on resume the guest re-syncs, so it jumps by the
//!   suspended interval while `mono` does not.

use serde::{Deserialize, Serialize};

use fencesim_planted::{active, Mutant};

/// Wall-clock value every node starts near (2026-01-01T00:00:00Z in Unix ms): fixed, so no
/// real clock is ever read.
pub const WALL_EPOCH_MS: i64 = 1_767_225_600_000;

/// One node's clock: constant parameters plus the timed events that change it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct NodeClock {
    /// Wall-clock offset from true time, in nanoseconds.
    pub offset_ns: i64,
    /// Rate error in parts per million (positive: runs fast).
    pub drift_ppm: f64,
    /// Wall-clock steps `(true time, delta)`, sorted by time.
    pub steps: Vec<(u64, i64)>,
    /// VM-suspend intervals `[start, end)` in true time, sorted and non-overlapping.
    pub freezes: Vec<(u64, u64)>,
}

impl NodeClock {
    /// A clock with a constant offset and drift, no steps and no freezes.
    pub fn new(offset_ns: i64, drift_ppm: f64) -> Self {
        NodeClock {
            offset_ns,
            drift_ppm,
            steps: Vec::new(),
            freezes: Vec::new(),
        }
    }

    /// Adds a wall-clock step of `delta_ns` at true time `at_ns`.
    pub fn add_step(&mut self, at_ns: u64, delta_ns: i64) {
        self.steps.push((at_ns, delta_ns));
        self.steps.sort_by_key(|step| step.0);
    }

    /// Adds a VM-suspend interval; overlapping intervals are merged.
    pub fn add_freeze(&mut self, start_ns: u64, end_ns: u64) {
        assert!(start_ns <= end_ns, "freeze ends before it starts");
        self.freezes.push((start_ns, end_ns));
        self.freezes.sort();
        let mut merged: Vec<(u64, u64)> = Vec::with_capacity(self.freezes.len());
        for &(start, end) in &self.freezes {
            match merged.last_mut() {
                Some(last) if start <= last.1 => last.1 = last.1.max(end),
                _ => merged.push((start, end)),
            }
        }
        self.freezes = merged;
    }

    fn rate(&self) -> f64 {
        if active(Mutant::ClockDriftInverted) {
            return 1.0 - self.drift_ppm / 1e6;
        }
        1.0 + self.drift_ppm / 1e6
    }

    /// True time during which the node was running (not suspended) in `[0, t)`.
    pub fn running_ns(&self, t: u64) -> u64 {
        if active(Mutant::ClockMonoRunsDuringSuspend) {
            return t;
        }
        let frozen: u64 = self
            .freezes
            .iter()
            .map(|&(start, end)| end.min(t).saturating_sub(start.min(t)))
            .sum();
        t - frozen
    }

    /// Whether the node is suspended at true time `t`.
    pub fn is_frozen(&self, t: u64) -> bool {
        self.freezes
            .iter()
            .any(|&(start, end)| start <= t && t < end)
    }

    /// The node's monotonic clock at true time `t`, in nanoseconds since boot.
    pub fn mono_ns(&self, t: u64) -> u64 {
        (self.running_ns(t) as f64 * self.rate()).round() as u64
    }

    /// The node's wall clock at true time `t`, in nanoseconds since the Unix epoch.
    pub fn wall_ns(&self, t: u64) -> i64 {
        let drifted = (t as f64 * self.rate()).round() as i64;
        if active(Mutant::ClockStepsIgnored) {
            return WALL_EPOCH_MS * 1_000_000 + drifted + self.offset_ns;
        }
        let stepped: i64 = self
            .steps
            .iter()
            .take_while(|s| s.0 <= t)
            .map(|s| s.1)
            .sum();
        WALL_EPOCH_MS * 1_000_000 + drifted + self.offset_ns + stepped
    }

    /// The earliest true time `>= now` at which `mono` reaches `target` (ignoring freezes that
    /// start later: callers re-check after waking, which is how a suspended guest's timers
    /// behave: they resume where the frozen clock left them).
    pub fn true_time_until_mono(&self, now: u64, target_mono: u64) -> u64 {
        let current = self.mono_ns(now);
        if target_mono <= current {
            return now;
        }
        let local = (target_mono - current) as f64;
        now + (local / self.rate()).ceil() as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    #[test]
    fn perfect_clock_tracks_true_time() {
        let clock = NodeClock::default();
        assert_eq!(clock.mono_ns(5 * MS), 5 * MS);
        assert_eq!(
            clock.wall_ns(5 * MS),
            WALL_EPOCH_MS * 1_000_000 + (5 * MS) as i64
        );
    }

    #[test]
    fn drift_scales_both_clocks() {
        let clock = NodeClock::new(0, 500.0);
        assert_eq!(clock.mono_ns(1_000 * MS), 1_000_500_000);
        assert_eq!(
            clock.wall_ns(1_000 * MS) - WALL_EPOCH_MS * 1_000_000,
            1_000_500_000
        );
    }

    #[test]
    fn steps_move_wall_but_never_mono() {
        let mut clock = NodeClock::default();
        clock.add_step(10 * MS, -128 * MS as i64);
        assert_eq!(clock.mono_ns(20 * MS), 20 * MS);
        let wall = clock.wall_ns(20 * MS) - WALL_EPOCH_MS * 1_000_000;
        assert_eq!(wall, (20 * MS) as i64 - (128 * MS) as i64);
        // Before the step the wall clock was unaffected.
        assert_eq!(
            clock.wall_ns(9 * MS) - WALL_EPOCH_MS * 1_000_000,
            (9 * MS) as i64
        );
    }

    #[test]
    fn suspend_freezes_mono_and_wall_jumps_on_resume() {
        let mut clock = NodeClock::default();
        clock.add_freeze(10 * MS, 110 * MS);
        assert_eq!(clock.mono_ns(10 * MS), 10 * MS);
        assert_eq!(
            clock.mono_ns(60 * MS),
            10 * MS,
            "mono stops during a suspend"
        );
        assert_eq!(
            clock.mono_ns(120 * MS),
            20 * MS,
            "mono lost the suspended 100 ms"
        );
        assert_eq!(
            clock.wall_ns(120 * MS) - WALL_EPOCH_MS * 1_000_000,
            (120 * MS) as i64,
            "wall re-synced on resume"
        );
        assert!(clock.is_frozen(50 * MS));
        assert!(!clock.is_frozen(110 * MS));
    }

    #[test]
    fn overlapping_freezes_merge() {
        let mut clock = NodeClock::default();
        clock.add_freeze(10 * MS, 50 * MS);
        clock.add_freeze(40 * MS, 60 * MS);
        assert_eq!(clock.freezes, vec![(10 * MS, 60 * MS)]);
        assert_eq!(clock.running_ns(100 * MS), 50 * MS);
    }

    #[test]
    fn true_time_until_mono_accounts_for_drift() {
        let slow = NodeClock::new(0, -100_000.0); // runs at 0.9x
        let t = slow.true_time_until_mono(0, 90 * MS);
        assert_eq!(t, 100 * MS);
        assert!(slow.mono_ns(t) >= 90 * MS);
    }
}
