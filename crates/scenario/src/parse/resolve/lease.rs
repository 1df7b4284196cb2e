//! `[lease]`: each field given, or its preset's default (`presets`), checked against the
//! service's own limits.

use fencesim_model::lease::{OnRestart, TokenSource};

use super::{
    super::{raw::*, Ctx, Result},
    presets::{defaults, Defaults},
};
use crate::spec::LeaseSpec;

impl Ctx<'_> {
    pub(crate) fn lease(&self, raw: RawLease) -> Result<LeaseSpec> {
        let row = defaults(raw.preset);
        let ttl_ms = self.ttl_ms(&raw, &row)?;
        let (election_timeout_ms, expiry_check_ms, restart_election_ms) =
            self.service_timers(&raw, &row)?;
        let (min_ttl_ms, max_ttl_ms) =
            self.ttl_bounds(&raw, &row, election_timeout_ms, expiry_check_ms)?;
        Ok(LeaseSpec {
            preset: raw.preset,
            ttl_ms,
            min_ttl_ms,
            max_ttl_ms,
            expiry_factor: self.expiry_factor(&raw, &row)?,
            expiry_check_ms,
            lock_delay_ms: self.lock_delay_ms(&raw, &row)?,
            election_timeout_ms,
            restart_election_ms,
            token_source: self.token_source(&raw, &row)?,
            token_scope: raw.token_scope.unwrap_or(row.token_scope),
            on_restart: raw.on_restart.unwrap_or(OnRestart::KeepAndExtend),
            expired_by: raw.expired_by.unwrap_or(row.expired_by),
            holder_identity: raw.holder_identity.unwrap_or(row.holder_identity),
            acquire: raw.acquire.unwrap_or_default(),
        })
    }

    /// `lease.ttl_ms`, or the preset's default, within the service's range.
    fn ttl_ms(&self, raw: &RawLease, row: &Defaults) -> Result<u64> {
        let ttl_ms = match raw.ttl_ms {
            Some(ttl) => self.positive_ms("lease.ttl_ms", ttl)?,
            None => self.required("lease.ttl_ms", row.ttl_ms)?,
        };
        match row.ttl_range_ms {
            Some((min, max, expected)) if !(min..=max).contains(&ttl_ms) => {
                Err(self.error("lease.ttl_ms", format!("{expected}, got {ttl_ms}")))
            }
            _ => Ok(ttl_ms),
        }
    }

    /// The lease service's own timers: `(election_timeout_ms, expiry_check_ms,
    /// restart_election_ms)`, each given or the preset's default.
    fn service_timers(&self, raw: &RawLease, row: &Defaults) -> Result<(u64, u64, u64)> {
        let election_timeout_ms = self.non_negative_ms(
            "lease.election_timeout_ms",
            raw.election_timeout_ms.unwrap_or(1_000),
        )?;
        let expiry_check_ms = match raw.expiry_check_ms {
            Some(check) => self.non_negative_ms("lease.expiry_check_ms", check)?,
            None => row.expiry_check_ms,
        };
        if let (Some(expected), 0) = (row.expiry_check_needed, expiry_check_ms) {
            return Err(self.error("lease.expiry_check_ms", expected));
        }
        let restart_election_ms = match raw.restart_election_ms {
            Some(election) => self.non_negative_ms("lease.restart_election_ms", election)?,
            None => (row.restart_election_ms)(election_timeout_ms),
        };
        Ok((election_timeout_ms, expiry_check_ms, restart_election_ms))
    }

    /// `(min_ttl_ms, max_ttl_ms)`: the bounds the service holds a requested TTL to (a maximum
    /// of 0 is none), each given or the preset's default.
    fn ttl_bounds(
        &self,
        raw: &RawLease,
        row: &Defaults,
        election_timeout_ms: u64,
        expiry_check_ms: u64,
    ) -> Result<(u64, u64)> {
        let min_ttl_ms = match raw.min_ttl_ms {
            Some(min) => self.non_negative_ms("lease.min_ttl_ms", min)?,
            None => (row.min_ttl_ms)(election_timeout_ms, expiry_check_ms),
        };
        let max_ttl_ms = match raw.max_ttl_ms {
            Some(max) => self.non_negative_ms("lease.max_ttl_ms", max)?,
            None => (row.max_ttl_ms)(expiry_check_ms),
        };
        // 0 is "no maximum"; a maximum below the minimum would silently be ignored.
        if max_ttl_ms > 0 && min_ttl_ms > max_ttl_ms {
            let (field, expected) = if raw.max_ttl_ms.is_some() {
                (
                    "lease.max_ttl_ms",
                    format!(
                        "expected a maximum TTL of at least min_ttl_ms ({min_ttl_ms} ms), or 0 for none, got {max_ttl_ms}"
                    ),
                )
            } else {
                (
                    "lease.min_ttl_ms",
                    format!(
                        "expected a minimum TTL of at most max_ttl_ms ({max_ttl_ms} ms), got {min_ttl_ms}"
                    ),
                )
            };
            return Err(self.error(field, expected));
        }
        Ok((min_ttl_ms, max_ttl_ms))
    }

    /// `lease.expiry_factor` (the service expires a lease at this multiple of its TTL), or the
    /// preset's default.
    fn expiry_factor(&self, raw: &RawLease, row: &Defaults) -> Result<u64> {
        let Some(factor) = raw.expiry_factor else {
            return Ok(row.expiry_factor);
        };
        match u64::try_from(factor) {
            Ok(factor) if (1..=100).contains(&factor) => Ok(factor),
            _ => Err(self.error(
                "lease.expiry_factor",
                format!("expected a whole multiple of the TTL from 1 to 100, got {factor}"),
            )),
        }
    }

    /// `lease.lock_delay_ms`, or the preset's default, within the service's limit.
    fn lock_delay_ms(&self, raw: &RawLease, row: &Defaults) -> Result<u64> {
        let lock_delay_ms = match raw.lock_delay_ms {
            Some(delay) => self.non_negative_ms("lease.lock_delay_ms", delay)?,
            None => row.lock_delay_ms,
        };
        match row.max_lock_delay_ms {
            Some((max, expected)) if lock_delay_ms > max => Err(self.error(
                "lease.lock_delay_ms",
                format!("{expected}, got {lock_delay_ms}"),
            )),
            _ => Ok(lock_delay_ms),
        }
    }

    /// `lease.token_source` (with `lease.token_bits`), or the preset's default.
    fn token_source(&self, raw: &RawLease, row: &Defaults) -> Result<TokenSource> {
        let source = self.required("lease.token_source", raw.token_source.or(row.token_source))?;
        let token_source = match (source, raw.token_bits) {
            (RawTokenSource::WrappingCounter, Some(bits)) => match u8::try_from(bits) {
                Ok(bits) if (1..=63).contains(&bits) => TokenSource::WrappingCounter { bits },
                _ => {
                    return Err(self.error(
                        "lease.token_bits",
                        format!("expected a counter width from 1 to 63 bits, got {bits}"),
                    ))
                }
            },
            (RawTokenSource::WrappingCounter, None) => {
                return Err(self.error_at(
                    "lease.token_bits",
                    "lease.token_source",
                    "expected a counter width (1..=63 bits): required with token_source = \"wrapping-counter\", got none",
                ))
            }
            (_, Some(bits)) => {
                return Err(self.error(
                    "lease.token_bits",
                    format!("expected no token_bits: only allowed with token_source = \"wrapping-counter\", got {bits}"),
                ))
            }
            (RawTokenSource::DurableCounter, None) => TokenSource::DurableCounter,
            (RawTokenSource::VolatileCounter, None) => TokenSource::VolatileCounter,
            (RawTokenSource::WallClock, None) => TokenSource::WallClock,
            (RawTokenSource::RandomId, None) => TokenSource::RandomId,
            (RawTokenSource::Revision, None) => TokenSource::Revision,
        };
        Ok(token_source)
    }
}
