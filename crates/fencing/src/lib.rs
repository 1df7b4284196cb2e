//! The built-in fencing modes: real implementations of [`fencesim_model::fence::Fence`].
//!
//! Each mode implements the trait exactly as a user's own store would; the simulator has no
//! special knowledge of any of them. `durable` means a mode's state survives
//! [`Fence::restart`](fencesim_model::fence::Fence::restart) (the simulator keeps it as the
//! disk); volatile state is forgotten there. `global` means one highest token is compared
//! across every resource instead of one per resource ("mixing scopes can reject valid writes").

#![warn(missing_docs)]

mod fence_on_acquire;
mod max_token;
mod none;
mod proxy;
mod read_then_write;
mod same_store_txn;
#[cfg(feature = "sqlite")]
mod sql;

#[cfg(test)]
mod check;

pub use fence_on_acquire::FenceOnAcquire;
pub use max_token::MaxToken;
pub use none::NoFence;
pub use proxy::Proxy;
pub use read_then_write::ReadThenWrite;
pub use same_store_txn::SameStoreTxn;
#[cfg(feature = "sqlite")]
pub use sql::{
    SqlFence, SqlVariant, UPDATE_LE, UPDATE_LE_GLOBAL, UPDATE_LT, UPDATE_LT_GLOBAL, UPDATE_UNFENCED,
};

/// Every built-in mode name, as written in scenario files and returned by `Fence::name`.
pub fn names() -> &'static [&'static str] {
    &[
        "none",
        "max-token",
        "sql",
        "sql-strict",
        "sql-ignore-rows",
        "read-then-write",
        "fence-on-acquire",
        "same-store-txn",
        "proxy",
    ]
}

#[cfg(test)]
mod tests {
    use fencesim_model::fence::{CompareScope, Durability, Fence};

    use super::*;

    #[test]
    fn names_match_every_mode() {
        let sql = |variant| {
            SqlFence::new(variant, Durability::Durable, CompareScope::PerResource)
                .expect("in-memory SQLite opens")
        };
        let modes: Vec<Box<dyn Fence>> = vec![
            Box::new(NoFence::new()),
            Box::new(MaxToken::new(
                Durability::Durable,
                CompareScope::PerResource,
            )),
            Box::new(sql(SqlVariant::Le)),
            Box::new(sql(SqlVariant::Lt)),
            Box::new(sql(SqlVariant::LeIgnoreRows)),
            Box::new(ReadThenWrite::new(Durability::Durable)),
            Box::new(FenceOnAcquire::new(
                Durability::Durable,
                CompareScope::PerResource,
            )),
            Box::new(SameStoreTxn::new()),
            Box::new(Proxy::new(
                Durability::Durable,
                CompareScope::PerResource,
                Vec::new(),
            )),
        ];
        let actual: Vec<String> = modes.iter().map(|mode| mode.name()).collect();
        assert_eq!(actual, names());
    }
}
