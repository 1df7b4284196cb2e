//! A worker's writes: the store (the run's SQLite file through a fencing mode, or etcd's
//! guarded transaction for `same-store-txn`), each write with its side effect, its sending,
//! its presentation and the store's verdict logged as the simulated storage records them.

use fencesim_fencing::{SqlFence, SqlVariant};
use fencesim_model::{
    fence::{CompareScope, Fence, Verdict, WriteRequest},
    history::{BeliefEnd, EffectVia, EventKind},
    nodes::STORAGE,
    Token,
};
use fencesim_scenario::SideEffects;

use super::{lock, LiveStore, Worker, WorkerConfig};
use crate::record::now_unix_ns;

pub(super) enum Store {
    Sql(SqlFence),
    Etcd,
}

impl Store {
    /// The store `config.store` names: the run's SQLite file, or etcd itself.
    pub(super) fn open(config: &WorkerConfig) -> Result<Store, String> {
        let variant = match config.store {
            LiveStore::SameStoreTxn => return Ok(Store::Etcd),
            LiveStore::None => SqlVariant::Unfenced,
            LiveStore::Sql => SqlVariant::Le,
            LiveStore::SqlIgnoreRows => SqlVariant::LeIgnoreRows,
        };
        SqlFence::open_file(&config.db, variant, CompareScope::PerResource)
            .map(Store::Sql)
            .map_err(|error| format!("{}: {error}", config.db.display()))
    }
}

impl Worker {
    /// A fresh operation id, unique across workers and incarnations of a run.
    pub(super) fn next_op(&self) -> u64 {
        let mut next = lock(&self.next_op);
        *next += 1;
        (self.config.index as u64 + 1) * 1_000_000_000
            + u64::from(self.config.incarnation) * 1_000_000
            + *next
    }

    /// One write with the token, inside a step (an external side effect first, when the
    /// scenario has them); false when the store rejected it (the belief then ends).
    pub(super) fn write(&self, op: u64, scope: &str, resource: &str, token: Token) -> bool {
        if self.config.scenario.workers.side_effects == SideEffects::Direct {
            // The external call happens before the fenced write: nothing checks its token.
            self.log.record(
                self.name(),
                EventKind::SideEffect {
                    op,
                    resource: resource.to_string(),
                    lease_scope: scope.to_string(),
                    worker: self.name().to_string(),
                    token,
                    via: EffectVia::Direct,
                },
                None,
            );
        }
        self.log.record(
            self.name(),
            EventKind::WriteSent {
                op,
                resource: resource.to_string(),
                token,
            },
            None,
        );
        let request = WriteRequest {
            op,
            resource: resource.to_string(),
            lease_scope: scope.to_string(),
            writer: self.name().to_string(),
            token,
            payload: format!("{token} by {} op {op}", self.name()),
        };
        let presented_at = now_unix_ns();
        let Some(verdict) = self.present(&request) else {
            // The write's fate is unknown: say nothing the checker would count.
            return true;
        };
        self.log.record_at(
            presented_at,
            STORAGE,
            EventKind::WritePresented {
                op,
                resource: request.resource.clone(),
                lease_scope: request.lease_scope.clone(),
                writer: request.writer.clone(),
                token,
            },
            None,
        );
        let accepted = verdict.is_accepted();
        let kind = match verdict {
            Verdict::Accepted { previous } => EventKind::WriteAccepted {
                op,
                resource: request.resource,
                lease_scope: request.lease_scope,
                writer: request.writer,
                token,
                previous,
            },
            Verdict::Rejected { accepted, reason } => EventKind::WriteRejected {
                op,
                resource: request.resource,
                lease_scope: request.lease_scope,
                writer: request.writer,
                token,
                accepted,
                reason,
            },
        };
        self.log.record(STORAGE, kind, None);
        if !accepted {
            self.end(BeliefEnd::WriteRejected);
        }
        accepted
    }

    /// The store's verdict on `request`; `None` when its fate is unknown (etcd did not answer).
    fn present(&self, request: &WriteRequest) -> Option<Verdict> {
        let token = request.token;
        match &mut *lock(&self.store) {
            Store::Sql(fence) => Some(fence.write(request, None)),
            Store::Etcd => {
                let signed = i64::try_from(token).unwrap_or(i64::MAX);
                let put = self.client.guarded_put(
                    &request.lease_scope,
                    &request.resource,
                    signed,
                    &request.payload,
                );
                match put {
                    Ok(Ok(previous)) => Some(Verdict::Accepted {
                        previous: previous.and_then(|p| Token::try_from(p).ok()),
                    }),
                    Ok(Err(current)) => Some(Verdict::Rejected {
                        accepted: current.and_then(|c| Token::try_from(c).ok()),
                        reason: format!(
                            "txn compare failed: lock key create revision is {current:?}, presented {token}"
                        ),
                    }),
                    Err(error) => {
                        eprintln!("{}: guarded put: {error}", self.name());
                        None
                    }
                }
            }
        }
    }
}
