//! `[workers]`: each field given, or the lease preset's default (`presets`), checked
//! against the effective TTL.

use super::{
    super::{raw::*, Ctx, Result},
    presets::{defaults, Defaults},
};
use crate::{
    limits::{MAX_WRITES_PER_LEASE, MIN_WORK_MEAN_MS},
    spec::*,
};

impl Ctx<'_> {
    pub(crate) fn workers(&self, raw: RawWorkers, lease: &LeaseSpec) -> Result<WorkerSpec> {
        let count = self.worker_count(raw.count)?;
        let resources = self.resources(raw.resources)?;
        let lease_scope = match raw.shared_lease {
            Some(name) if name.is_empty() => {
                return Err(self.error(
                    "workers.shared_lease",
                    "expected a non-empty lease name, got \"\"",
                ))
            }
            Some(name) => LeaseScopeSpec::Single(name),
            None => LeaseScopeSpec::PerResource,
        };
        let work_ms = self.work_ms(raw.work_ms)?;
        let writes_per_lease = self.writes_per_lease(raw.writes_per_lease)?;
        let row = defaults(lease.preset);
        let (renew_every_ms, renew_deadline_ms) =
            self.renewal(raw.renew_every_ms, raw.renew_deadline_ms, lease, &row)?;
        let request_timeout_ms =
            self.request_timeout_ms(raw.request_timeout_ms, lease.effective_ttl_ms())?;
        let stop_on_renew_failure = raw
            .stop_on_renew_failure
            .unwrap_or(row.stop_on_renew_failure);
        let (acquire_retry_ms, acquire_retry_jitter) = self.acquire_retry(
            raw.acquire_retry_ms,
            raw.acquire_retry_jitter,
            &row,
            renew_every_ms,
        )?;
        Ok(WorkerSpec {
            count,
            resources,
            lease_scope,
            work_ms,
            writes_per_lease,
            renew_every_ms,
            renew_deadline_ms,
            stop_on_renew_failure,
            check_lease_before_write: raw.check_lease_before_write.unwrap_or(false),
            recheck_deadline_before_write: raw.recheck_deadline_before_write.unwrap_or(false),
            deadline_from: raw.deadline_from.unwrap_or(DeadlineFrom::RequestSent),
            request_timeout_ms,
            acquire_retry_ms,
            acquire_retry_jitter,
            side_effects: raw.side_effects.unwrap_or(SideEffects::None),
        })
    }

    /// `workers.count`: 1 to 64.
    fn worker_count(&self, count: Option<i64>) -> Result<usize> {
        let count = self.required("workers.count", count)?;
        match usize::try_from(count) {
            Ok(count) if (1..=64).contains(&count) => Ok(count),
            _ => Err(self.error(
                "workers.count",
                format!("expected 1 to 64 workers, got {count}"),
            )),
        }
    }

    /// `workers.resources`: at least one, each named and distinct.
    fn resources(&self, resources: Option<Vec<String>>) -> Result<Vec<String>> {
        let resources = self.required("workers.resources", resources)?;
        if resources.is_empty() {
            return Err(self.error(
                "workers.resources",
                "expected at least one resource name, got []",
            ));
        }
        for (index, resource) in resources.iter().enumerate() {
            let field = format!("workers.resources[{index}]");
            if resource.is_empty() {
                return Err(self.error(&field, "expected a non-empty resource name, got \"\""));
            }
            if resources[..index].contains(resource) {
                return Err(self.error(
                    &field,
                    format!("expected distinct resource names, got {resource:?} twice"),
                ));
            }
        }
        Ok(resources)
    }

    /// `workers.work_ms`: a distribution whose mean lets virtual time advance.
    fn work_ms(&self, work_ms: Option<RawDist>) -> Result<Dist> {
        let work_ms = self.dist(
            "workers.work_ms",
            self.required("workers.work_ms", work_ms)?,
        )?;
        // Work that takes no time, over a network that may take none, never lets virtual
        // time advance: the run would grow without bound.
        if work_ms.mean() < MIN_WORK_MEAN_MS {
            return Err(self.error(
                "workers.work_ms",
                format!(
                    "expected a mean of at least {MIN_WORK_MEAN_MS} ms (work that takes no time never lets time advance), got {}",
                    work_ms.mean()
                ),
            ));
        }
        Ok(work_ms)
    }

    /// `workers.writes_per_lease`: 1 by default.
    fn writes_per_lease(&self, writes_per_lease: Option<i64>) -> Result<u32> {
        let writes_per_lease = writes_per_lease.unwrap_or(1);
        u64::try_from(writes_per_lease)
            .ok()
            .filter(|writes| (1..=MAX_WRITES_PER_LEASE).contains(writes))
            .and_then(|writes| u32::try_from(writes).ok())
            .ok_or_else(|| {
                self.error(
                    "workers.writes_per_lease",
                    format!("expected 1 to {MAX_WRITES_PER_LEASE} writes per lease, got {writes_per_lease}"),
                )
            })
    }

    /// `(renew_every_ms, renew_deadline_ms)` from the values given (`every`, `deadline`) or the
    /// preset's defaults, checked against the effective TTL and, for client-go, as client-go
    /// checks them.
    fn renewal(
        &self,
        every: Option<i64>,
        deadline: Option<i64>,
        lease: &LeaseSpec,
        row: &Defaults,
    ) -> Result<(u64, u64)> {
        let ttl_ms = lease.effective_ttl_ms();
        let renew_every_ms = match every {
            Some(renew) => {
                let renew = self.positive_ms("workers.renew_every_ms", renew)?;
                if renew >= ttl_ms {
                    return Err(self.error(
                        "workers.renew_every_ms",
                        format!("expected an interval shorter than the effective TTL ({ttl_ms} ms), got {renew}"),
                    ));
                }
                renew
            }
            None if ttl_ms / 3 == 0 => {
                return Err(self.error_at(
                    "workers.renew_every_ms",
                    "lease.ttl_ms",
                    format!("expected a positive default interval, but effective TTL {ttl_ms} ms / 3 is 0: set it"),
                ))
            }
            None => (row.renew_every_ms)(ttl_ms),
        };
        let renew_deadline_ms = match deadline {
            Some(deadline) => self.positive_ms("workers.renew_deadline_ms", deadline)?,
            None => (row.renew_deadline_ms)(ttl_ms),
        };
        if row.leader_elector_checks {
            self.leader_elector(
                ttl_ms,
                renew_every_ms,
                renew_deadline_ms,
                deadline.is_some(),
            )?;
        }
        Ok((renew_every_ms, renew_deadline_ms))
    }

    /// client-go's `NewLeaderElector` validation of its timings.
    fn leader_elector(
        &self,
        ttl_ms: u64,
        renew_every_ms: u64,
        renew_deadline_ms: u64,
        deadline_given: bool,
    ) -> Result<()> {
        if ttl_ms <= renew_deadline_ms {
            return Err(self.error_at(
                "workers.renew_deadline_ms",
                if deadline_given { "workers.renew_deadline_ms" } else { "lease.ttl_ms" },
                format!("expected client-go's LeaseDuration (lease.ttl_ms = {ttl_ms}) > RenewDeadline, got RenewDeadline {renew_deadline_ms}"),
            ));
        }
        if renew_deadline_ms as f64 <= 1.2 * renew_every_ms as f64 {
            return Err(self.error(
                "workers.renew_deadline_ms",
                format!("expected client-go's RenewDeadline > 1.2 × RetryPeriod (workers.renew_every_ms = {renew_every_ms}), got {renew_deadline_ms}"),
            ));
        }
        Ok(())
    }

    /// `workers.request_timeout_ms`: half the effective TTL, at most 1 s, by default.
    fn request_timeout_ms(&self, request_timeout_ms: Option<i64>, ttl_ms: u64) -> Result<u64> {
        let timeout_ms = match request_timeout_ms {
            Some(timeout) => self.positive_ms("workers.request_timeout_ms", timeout)?,
            None if ttl_ms / 2 == 0 => {
                return Err(self.error_at(
                    "workers.request_timeout_ms",
                    "lease.ttl_ms",
                    format!("expected a positive default timeout, but effective TTL {ttl_ms} ms / 2 is 0: set it"),
                ))
            }
            None => (ttl_ms / 2).min(1_000),
        };
        Ok(timeout_ms)
    }

    /// `(acquire_retry_ms, acquire_retry_jitter)`: a candidate's retry interval and its
    /// jitter, each given or the preset's default.
    fn acquire_retry(
        &self,
        acquire_retry_ms: Option<i64>,
        acquire_retry_jitter: Option<f64>,
        row: &Defaults,
        renew_every_ms: u64,
    ) -> Result<(u64, f64)> {
        let retry_ms = self.positive_ms(
            "workers.acquire_retry_ms",
            acquire_retry_ms.unwrap_or((row.acquire_retry_ms)(renew_every_ms) as i64),
        )?;
        let jitter = self.non_negative_f64(
            "workers.acquire_retry_jitter",
            acquire_retry_jitter.unwrap_or(row.acquire_retry_jitter),
            "multiples of acquire_retry_ms",
        )?;
        Ok((retry_ms, jitter))
    }
}
