//! Coverage conditions ("sometimes" assertions, `fencesim_model::COVERAGE`) computed from a
//! seed's metrics.

use crate::Metrics;

/// Whether the condition `name` happened in a run with these metrics; `None` for a name that
/// is not a coverage condition.
pub fn hit(name: &str, m: &Metrics) -> Option<bool> {
    Some(match name {
        "stale-write-presented" => m.stale_presented > 0,
        "stale-write-rejected" => m.stale_write_rejections > 0,
        "write-abandoned" => m.writes_abandoned > 0,
        "lease-expired-while-paused" => m.paused_expiries > 0,
        "false-expiry" => m.false_expiries > 0,
        "takeover" => m.takeovers > 0,
        "takeover-after-crash" => !m.takeover_latency_ms.is_empty(),
        "renewal-failed" => m.renewal_failures > 0,
        "superseded-side-effect" => m.superseded_side_effects > 0,
        "side-effect" => m.side_effects > 0,
        "overlapping-beliefs" => m.overlapping_beliefs > 0,
        "fence-raised" => !m.fence_window_ms.is_empty(),
        "accepted-in-fence-window" => m.accepts_in_fence_window > 0,
        _ => return None,
    })
}

/// Every coverage condition hit by a run, in `COVERAGE` order.
pub fn hits(m: &Metrics) -> Vec<String> {
    fencesim_model::COVERAGE
        .iter()
        .filter(|(name, _)| hit(name, m) == Some(true))
        .map(|(name, _)| name.to_string())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_listed_condition_is_computed() {
        for (name, _) in fencesim_model::COVERAGE {
            assert_eq!(hit(name, &Metrics::default()), Some(false), "{name}");
        }
        assert_eq!(hit("no-such-condition", &Metrics::default()), None);
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
                "stale-write-rejected".to_string(),
                "lease-expired-while-paused".to_string()
            ]
        );
    }
}
