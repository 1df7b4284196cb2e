//! The ranking of the settings that meet every target, and their Pareto front.
//!
//! Settings are compared on the seeds they all ran: with adaptive seeds some settings run
//! further along the one seed sequence than others, and a p99 over 800 seeds is not
//! comparable with one over 200 (its extra seeds may hold, or miss, the one slow recovery
//! that sets a p99). Every setting meeting the targets is measured again over the common
//! prefix of the sequence (the same seeds and fault plans: common random numbers make the
//! comparison exact), and that is what is ranked, drawn and printed as `ranked`.
//!
//! The lowest p99 wins only on the evidence: when its 95 % upper bound is not below another
//! setting's lower bound (or either bound is missing: under 368 samples a p99 has no upper
//! bound), the two are tied within the evidence, and the tie-break ([`TIE_BREAK`]) picks
//! among every setting so tied.

use crate::report::{Quantiles, Ranked, Ranking, SettingResult, TuneReport, TIE_BREAK};
use crate::stats;
use fencesim_planted::{active, Mutant};

/// The p99 of a ranking metric's quantiles: what the recommendation minimises.
pub fn ranked(q: &Quantiles) -> Option<f64> {
    if active(Mutant::TuneRankingReadsP50) {
        q.p50
    } else {
        q.p99
    }
}

/// The ranking figures of `s` over its first `n` seeds. A setting without its per-seed
/// samples (a hand-made or read-back report) gives its own figures.
pub fn ranked_on(s: &SettingResult, ranking: Ranking, n: u64) -> Ranked {
    if s.per_seed.is_empty() || (s.per_seed.len() as u64) < n {
        let r = &s.false_expiries;
        let exposure_ms = r.exposure_h * 3_600_000.0;
        return Ranked {
            seeds: s.runs,
            quantiles: ranking.of(s).clone(),
            false_expiries: r.clone(),
            disruption: stats::rate(r.count + s.stand_downs.count, exposure_ms),
        };
    }
    let seeds = &s.per_seed[..n as usize];
    let samples: Vec<f64> = seeds
        .iter()
        .flat_map(|x| ranking.samples(x).iter().copied())
        .collect();
    let exposure_ms: f64 = seeds.iter().map(|x| x.exposure_ms).sum();
    let false_expiries: u64 = seeds.iter().map(|x| x.false_expiries).sum();
    let stand_downs: u64 = seeds.iter().map(|x| x.stand_downs).sum();
    Ranked {
        seeds: n,
        quantiles: stats::quantiles(&samples),
        false_expiries: stats::rate(false_expiries, exposure_ms),
        disruption: stats::rate(false_expiries + stand_downs, exposure_ms),
    }
}

/// Whether `a`'s p99 is below `b`'s on the evidence: `a`'s 95 % upper bound below `b`'s
/// lower bound, or `b` has no sample at all (it ranks after every setting with one).
pub fn beats(a: &Quantiles, b: &Quantiles) -> bool {
    match (ranked(a), ranked(b)) {
        (Some(_), None) => true,
        (None, _) => false,
        (Some(_), Some(_)) => matches!((a.p99_high, b.p99_low), (Some(h), Some(l)) if h < l),
    }
}

/// The order the tie-break puts `s` in: its p50 of the ranking metric (none last), its
/// disruption rate, then grid order — all on the figures it was ranked on.
fn tie_key(i: usize, s: &SettingResult) -> (f64, f64, usize) {
    let r = s.ranked.as_ref().expect("ranked before the tie-break");
    let disruption = r.disruption.exact.map_or(r.disruption.per_hour, |x| x[0]);
    (r.quantiles.p50.unwrap_or(f64::INFINITY), disruption, i)
}

fn by_key(a: (f64, f64, usize), b: (f64, f64, usize)) -> std::cmp::Ordering {
    a.0.total_cmp(&b.0)
        .then(a.1.total_cmp(&b.1))
        .then(a.2.cmp(&b.2))
}

/// The outcome of the ranking.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Standing {
    /// The recommendation.
    pub pick: Option<usize>,
    /// The setting with the lowest p99 on the common seeds.
    pub leader: Option<usize>,
    /// The settings tied within the evidence with the leader (the leader included); empty
    /// when the leader wins on the evidence.
    pub tied: Vec<usize>,
    /// The common seeds compared.
    pub seeds: u64,
}

/// Ranks `meeting` (the settings meeting every target) on the seeds they all ran: fills
/// their `ranked` figures, finds the lowest p99 and the settings tied with it within the
/// evidence, and picks among those by the tie-break.
pub fn rank(report: &mut TuneReport, ranking: Ranking, meeting: &[usize]) -> Standing {
    let seeds = meeting
        .iter()
        .map(|&i| report.settings[i].runs)
        .min()
        .unwrap_or(0);
    for s in &mut report.settings {
        s.ranked = None;
    }
    for &i in meeting {
        let r = ranked_on(&report.settings[i], ranking, seeds);
        report.settings[i].ranked = Some(r);
    }
    let settings = &report.settings;
    let quantiles = |i: usize| &settings[i].ranked.as_ref().expect("ranked").quantiles;
    let leader = meeting.iter().copied().min_by(|&a, &b| {
        let (pa, pb) = (
            ranked(quantiles(a)).unwrap_or(f64::INFINITY),
            ranked(quantiles(b)).unwrap_or(f64::INFINITY),
        );
        pa.total_cmp(&pb)
            .then_with(|| by_key(tie_key(a, &settings[a]), tie_key(b, &settings[b])))
    });
    let Some(leader) = leader else {
        return Standing::default();
    };
    let tied: Vec<usize> = meeting
        .iter()
        .copied()
        .filter(|&j| j == leader || !beats(quantiles(leader), quantiles(j)))
        .collect();
    let pick = tied
        .iter()
        .copied()
        .min_by(|&a, &b| by_key(tie_key(a, &settings[a]), tie_key(b, &settings[b])));
    Standing {
        pick,
        leader: Some(leader),
        tied: if tied.len() > 1 { tied } else { Vec::new() },
        seeds,
    }
}

/// The Pareto front over (ranked p99, ranked false expiries per hour) among the settings
/// meeting every target, as the trade-off picture draws them: no other is at least as good
/// on both and better on one.
pub fn pareto_front(report: &TuneReport, meeting: &[usize]) -> Vec<usize> {
    let points: Vec<(usize, f64, f64)> = meeting
        .iter()
        .filter_map(|&i| {
            let r = report.settings[i].ranked.as_ref()?;
            Some((i, ranked(&r.quantiles)?, r.false_expiries.per_hour))
        })
        .collect();
    points
        .iter()
        .filter(|&&(i, x, y)| {
            !points
                .iter()
                .any(|&(j, x2, y2)| j != i && x2 <= x && y2 <= y && (x2 < x || y2 < y))
        })
        .map(|p| p.0)
        .collect()
}

/// Why `standing` picked what it did, in words (the recommendation's reason begins with
/// this).
pub fn explain(report: &TuneReport, ranking: Ranking, standing: &Standing) -> String {
    let name = ranking.name();
    let Some(pick) = standing.pick else {
        return String::new();
    };
    let p = report.settings[pick].ranked.as_ref().expect("ranked");
    let over = format!(
        "over the {} seeds every setting meeting the targets ran",
        standing.seeds
    );
    let interval = |q: &Quantiles| match (ranked(q), q.p99_low, q.p99_high) {
        (Some(v), Some(l), Some(h)) => format!("{v} ms [{l}, {h}]"),
        (Some(v), _, _) => format!("{v} ms, too few samples ({}) for its interval", q.count),
        (None, _, _) => "no sample".to_string(),
    };
    if ranked(&p.quantiles).is_none() {
        return format!(
            "no setting meeting the targets has a sample of the {name}: the profile had no \
             crash or pause that ended in a takeover for them, so the tie-break decides \
             ({TIE_BREAK})"
        );
    }
    if standing.tied.is_empty() {
        return format!(
            "the lowest {name} {over}: {}, its 95 % interval below every other's",
            interval(&p.quantiles)
        );
    }
    let leader = standing.leader.expect("a leader");
    let l = report.settings[leader].ranked.as_ref().expect("ranked");
    format!(
        "tie within the evidence on the {name} {over}: {} settings' 95 % intervals overlap \
         the lowest ({}: {}), so the tie-break (the lower p50, then the fewer false expiries \
         + stand-downs per hour, then grid order) chose it: p50 {}, {}/h false expiries + \
         stand-downs",
        standing.tied.len(),
        report.settings[leader].label(),
        interval(&l.quantiles),
        p.quantiles
            .p50
            .map_or("none".to_string(), |v| format!("{v} ms")),
        p.disruption.per_hour,
    )
}
