//! Coverage conditions ("sometimes" assertions, [`Coverage`]) computed from a seed's metrics.

use fencesim_model::Coverage;
use fencesim_planted::{active, Mutant};

use crate::Metrics;

/// Whether `condition` happened in a run with these metrics.
pub fn hit(condition: Coverage, m: &Metrics) -> bool {
    match condition {
        Coverage::StaleWritePresented => m.stale_presented > 0,
        Coverage::StaleWriteRejected => m.stale_write_rejections > 0,
        Coverage::WriteAbandoned => m.writes_abandoned > 0,
        Coverage::LeaseExpiredWhilePaused => m.paused_expiries > 0,
        // The planted bug: any expiry, a crashed holder's included, counts as a false one.
        Coverage::FalseExpiry if active(Mutant::CoverageFalseExpiryAnyExpiry) => {
            m.false_expiries > 0 || m.expiries > 0
        }
        Coverage::FalseExpiry => m.false_expiries > 0,
        Coverage::Takeover => m.takeovers > 0,
        Coverage::TakeoverAfterCrash => m.takeovers_after_crash > 0,
        Coverage::RenewalFailed => m.renewal_failures > 0,
        Coverage::SupersededSideEffect => m.superseded_side_effects > 0,
        Coverage::SideEffect => m.side_effects > 0,
        Coverage::OverlappingBeliefs => m.overlapping_beliefs > 0,
        Coverage::FenceRaised => !m.fence_window_ms.is_empty(),
        Coverage::AcceptedInFenceWindow => m.accepts_in_fence_window > 0,
        Coverage::CurrentWriteRejected => m.current_write_rejections > 0,
        Coverage::OutageStandDown => m.outage_stand_downs > 0,
    }
}

/// Every coverage condition hit by a run, in [`Coverage::ALL`] order.
pub fn hits(m: &Metrics) -> Vec<Coverage> {
    Coverage::ALL
        .into_iter()
        .filter(|&condition| hit(condition, m))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nothing_is_hit_by_an_empty_run() {
        assert!(hits(&Metrics::default()).is_empty());
    }

    #[test]
    fn conditions_follow_their_metrics() {
        let m = Metrics {
            stale_write_rejections: 1,
            paused_expiries: 2,
            ..Metrics::default()
        };
        assert_eq!(
            hits(&m),
            vec![
                Coverage::StaleWriteRejected,
                Coverage::LeaseExpiredWhilePaused
            ]
        );
    }
}
