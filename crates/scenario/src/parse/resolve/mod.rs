//! Resolution, section by section: the one place raw values become spec values, defaults
//! included (and documented in docs/scenario-format.md). `lease` and `workers` take their
//! defaults from the preset's row in `presets`; the other sections are here.

mod lease;
mod presets;
mod workers;

use std::collections::BTreeMap;

use fencesim_model::Coverage;

use super::{join, raw::*, validate::file_name, Ctx, Result};
use crate::{
    limits::{MAX_LIST_LEN, MAX_RUN_DURATION_MS},
    spec::*,
};

impl Ctx<'_> {
    pub(crate) fn resolve(&self, raw: RawScenario) -> Result<Scenario> {
        let name = self.required("name", raw.name)?;
        let name_ok = !name.is_empty()
            && name
                .bytes()
                .all(|byte| byte.is_ascii_lowercase() || byte.is_ascii_digit() || byte == b'-');
        if !name_ok {
            return Err(self.error(
                "name",
                format!("expected a name made of [a-z0-9-]+, got {name:?}"),
            ));
        }
        if name.len() > crate::limits::MAX_NAME_LEN {
            return Err(self.error(
                "name",
                format!(
                    "expected a name of at most {} bytes (it becomes file names), got {} bytes",
                    crate::limits::MAX_NAME_LEN,
                    name.len()
                ),
            ));
        }
        let description = self.required("description", raw.description)?;
        if description.trim().is_empty() {
            return Err(self.error("description", "expected a non-empty description, got \"\""));
        }
        let duration_ms = self.positive_ms_within(
            "duration_ms",
            self.required("duration_ms", raw.duration_ms)?,
            MAX_RUN_DURATION_MS,
        )?;
        let seeds = self.seeds(&self.required("seeds", raw.seeds)?)?;
        let lease = self.lease(self.required("lease", raw.lease)?)?;
        let workers = self.workers(self.required("workers", raw.workers)?, &lease)?;
        self.work_fits_the_run(&workers.work_ms, duration_ms)?;
        let names = fencesim_model::nodes::processes(workers.count);
        let storage = self.storage(self.required("storage", raw.storage)?, workers.count)?;
        let network = self.network(raw.network.unwrap_or_default())?;
        let clocks = self.clocks(raw.clocks.unwrap_or_default(), &names)?;
        let faults = self.faults(raw.faults.unwrap_or_default(), duration_ms, &names)?;
        let expect = self.expect(self.required("expect", raw.expect)?)?;
        Ok(Scenario {
            name,
            description,
            duration_ms,
            seeds,
            lease,
            storage,
            workers,
            network,
            clocks,
            faults,
            expect,
        })
    }

    /// `workers.work_ms`: its high end (max, p99, 4.6 × an exponential's mean, or a table's
    /// largest value) at most `duration_ms`. The run ends twice the liveness bound after the
    /// heal, and that bound holds one unit of work: a week of work in a minute's run made a
    /// seed simulate four weeks (~230 s of wall time for 12 000 events).
    fn work_fits_the_run(&self, work_ms: &Dist, duration_ms: u64) -> Result<()> {
        if work_ms.high() > duration_ms as f64 {
            return Err(self.error(
                "workers.work_ms",
                format!(
                    "expected a unit of work that fits the run: at most duration_ms ({duration_ms} ms) at its high end (max, p99, 4.6 × mean or largest value), got {}",
                    work_ms.high()
                ),
            ));
        }
        Ok(())
    }

    pub(crate) fn seeds(&self, text: &str) -> Result<SeedRange> {
        SeedRange::parse(text).map_err(|expected| self.error("seeds", expected))
    }

    pub(crate) fn storage(&self, raw: RawStorage, workers: usize) -> Result<StorageSpec> {
        let fencing = self.required("storage.fencing", raw.fencing)?;
        let proxy_bypass = raw.proxy_bypass.unwrap_or_default();
        if !proxy_bypass.is_empty() && fencing != FencingMode::Proxy {
            return Err(self.error(
                "storage.proxy_bypass",
                format!(
                    "expected no bypassing workers: only allowed with fencing = \"proxy\", got fencing = {:?}",
                    file_name(&fencing)
                ),
            ));
        }
        for (index, name) in proxy_bypass.iter().enumerate() {
            self.worker(&format!("storage.proxy_bypass[{index}]"), name, workers)?;
        }
        Ok(StorageSpec {
            fencing,
            max_token: raw.max_token.unwrap_or(Durability::Durable),
            compare_scope: raw.compare_scope.unwrap_or(CompareScope::PerResource),
            proxy_bypass,
        })
    }

    pub(crate) fn network(&self, raw: RawNetwork) -> Result<NetworkSpec> {
        let base = match raw.latency_ms {
            Some(dist) => self.dist("network.latency_ms", dist)?,
            None => Dist::Lognormal {
                median: 0.5,
                p99: 5.0,
            },
        };
        let spike_probability = self.probability(
            "network.spike_probability",
            raw.spike_probability.unwrap_or(0.0),
            true,
        )?;
        let spikes_ms = raw.spikes_ms.unwrap_or_else(|| vec![200.0, 400.0, 800.0]);
        self.list_len("network.spikes_ms", spikes_ms.len())?;
        for (index, &spike) in spikes_ms.iter().enumerate() {
            self.positive_f64(
                &format!("network.spikes_ms[{index}]"),
                spike,
                "milliseconds",
            )?;
        }
        if spike_probability > 0.0 && spikes_ms.is_empty() {
            return Err(self.error(
                "network.spikes_ms",
                "expected at least one spike size when spike_probability > 0, got []",
            ));
        }
        Ok(NetworkSpec {
            latency: LatencySpec {
                base,
                spike_probability,
                spikes_ms,
            },
            loss: self.probability("network.loss", raw.loss.unwrap_or(0.0), false)?,
            duplicate: self.probability("network.duplicate", raw.duplicate.unwrap_or(0.0), true)?,
        })
    }

    pub(crate) fn clocks(&self, raw: RawClocks, names: &[String]) -> Result<ClocksSpec> {
        let random_drift_ppm = self.non_negative_f64(
            "clocks.random_drift_ppm",
            raw.random_drift_ppm.unwrap_or(0.0),
            "ppm",
        )?;
        self.drift("clocks.random_drift_ppm", random_drift_ppm)?;
        let random_offset_ms = self.non_negative_f64(
            "clocks.random_offset_ms",
            raw.random_offset_ms.unwrap_or(0.0),
            "milliseconds",
        )?;
        let mut nodes = BTreeMap::new();
        for (name, clock) in raw.nodes.unwrap_or_default() {
            let path = format!("clocks.nodes.{name}");
            self.node(&path, &name, names)?;
            let offset_ms =
                self.bounded_ms_f64(&join(&path, "offset_ms"), clock.offset_ms.unwrap_or(0.0))?;
            let drift_ppm =
                self.drift(&join(&path, "drift_ppm"), clock.drift_ppm.unwrap_or(0.0))?;
            nodes.insert(
                name,
                ClockSpec {
                    offset_ms,
                    drift_ppm,
                },
            );
        }
        Ok(ClocksSpec {
            random_drift_ppm,
            random_offset_ms,
            nodes,
        })
    }

    pub(crate) fn faults(
        &self,
        raw: RawFaults,
        duration_ms: u64,
        names: &[String],
    ) -> Result<FaultSpec> {
        let schedule = raw.schedule.unwrap_or_default();
        self.list_len("faults.schedule", schedule.len())?;
        let schedule = schedule
            .into_iter()
            .enumerate()
            .map(|(index, fault)| {
                self.scheduled(
                    &format!("faults.schedule[{index}]"),
                    fault,
                    duration_ms,
                    names,
                )
            })
            .collect::<Result<Vec<_>>>()?;
        self.check_overlaps(&schedule)?;
        let random = raw.random.unwrap_or_default();
        self.list_len("faults.random", random.len())?;
        let random = random
            .into_iter()
            .enumerate()
            .map(|(index, fault)| self.random(&format!("faults.random[{index}]"), fault, names))
            .collect::<Result<Vec<_>>>()?;
        let outage = match raw.outage {
            None => None,
            Some(outage) => {
                let form = self.required("faults.outage.form", outage.form)?;
                let field = "faults.outage.duration_ms";
                let length = self.required(field, outage.duration_ms)?;
                let length = self.positive_f64(field, length, "milliseconds")?;
                if length >= duration_ms as f64 {
                    return Err(self.error(
                        field,
                        format!("expected an outage shorter than duration_ms ({duration_ms} ms), so it fits inside the safety phase, got {length}"),
                    ));
                }
                Some(crate::outage::InjectedOutage {
                    form,
                    duration_ms: length,
                })
            }
        };
        Ok(FaultSpec {
            schedule,
            random,
            swarm: raw.swarm.unwrap_or(false),
            outage,
        })
    }

    /// At most `MAX_LIST_LEN` entries.
    fn list_len(&self, field: &str, len: usize) -> Result<()> {
        if len <= MAX_LIST_LEN {
            Ok(())
        } else {
            Err(self.error(
                field,
                format!("expected at most {MAX_LIST_LEN} entries, got {len}"),
            ))
        }
    }

    pub(crate) fn expect(&self, raw: RawExpect) -> Result<Expect> {
        let outcome = match (raw.safe, raw.violates) {
            (Some(true), Some(_)) => {
                return Err(self.error(
                    "expect.violates",
                    "expected either `safe = true` or `violates = [...]`, got both",
                ))
            }
            (Some(true), None) => Outcome::Safe,
            (Some(false), None) => {
                return Err(self.error(
                    "expect.safe",
                    "expected `safe = true` (or `violates = [...]` instead), got false",
                ))
            }
            (_, Some(violates)) => {
                if violates.is_empty() {
                    return Err(self.error(
                        "expect.violates",
                        "expected at least one invariant (I1..I5), got [] (use `safe = true`)",
                    ));
                }
                for (index, invariant) in violates.iter().enumerate() {
                    if violates[..index].contains(invariant) {
                        return Err(self.error(
                            &format!("expect.violates[{index}]"),
                            format!("expected distinct invariants, got {invariant} twice"),
                        ));
                    }
                }
                Outcome::Violates(violates)
            }
            (None, None) => {
                return Err(self.error(
                    "expect",
                    "expected `safe = true` or `violates = [...]`, got neither",
                ))
            }
        };
        let coverage = self.conditions("coverage", raw.coverage.unwrap_or_default())?;
        let never = self.conditions("never", raw.never.unwrap_or_default())?;
        for (index, condition) in never.iter().enumerate() {
            if coverage.contains(condition) {
                return Err(self.error(
                    &format!("expect.never[{index}]"),
                    format!(
                        "expected a condition not also required by expect.coverage, got `{}`",
                        condition.name()
                    ),
                ));
            }
        }
        // No vacuous passes: a safe expectation must say what danger it survived.
        if outcome == Outcome::Safe && coverage.is_empty() {
            return Err(self.error(
                "expect.coverage",
                "expected at least one coverage condition with `safe = true` (what danger must \
                 happen for \"safe\" to mean something, e.g. [\"stale-write-rejected\"])",
            ));
        }
        Ok(Expect {
            outcome,
            coverage,
            never,
        })
    }

    /// `expect.<key>`: distinct coverage condition names, resolved.
    fn conditions(&self, key: &str, names: Vec<String>) -> Result<Vec<Coverage>> {
        let mut coverage: Vec<Coverage> = Vec::new();
        for (index, name) in names.iter().enumerate() {
            let field = format!("expect.{key}[{index}]");
            let Some(condition) = Coverage::parse(name) else {
                let known: Vec<&str> = Coverage::ALL.iter().map(|c| c.name()).collect();
                return Err(self.error(
                    &field,
                    format!("expected one of {}, got `{name}`", known.join(", ")),
                ));
            };
            if coverage.contains(&condition) {
                return Err(self.error(
                    &field,
                    format!("expected distinct conditions, got `{name}` twice"),
                ));
            }
            coverage.push(condition);
        }
        Ok(coverage)
    }
}
