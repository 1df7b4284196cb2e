//! The way back: a [`Scenario`] rendered as a scenario file, every resolved value explicit,
//! that parses to the same `Scenario` (tested on the whole catalogue). Used to save a seed's
//! fault plan as an explicit schedule and to write shrunk scenarios.

use fencesim_model::lease::TokenSource;
use serde::Serialize;
use toml_edit::{value, Array, ArrayOfTables, DocumentMut, InlineTable, Item, Table, Value};

use crate::spec::{
    ClocksSpec, Dist, Expect, FaultSpec, LeaseScopeSpec, LeaseSpec, NetworkSpec, Outcome, Scenario,
    StorageSpec, WorkerSpec,
};

/// `scenario` as the text of a scenario file.
pub fn scenario_toml(scenario: &Scenario) -> String {
    let mut doc = DocumentMut::new();
    doc.insert("name", value(scenario.name.as_str()));
    doc.insert("description", value(scenario.description.as_str()));
    doc.insert("duration_ms", value(int(scenario.duration_ms)));
    doc.insert("seeds", value(scenario.seeds.to_string()));
    doc.insert("lease", Item::Table(lease_table(&scenario.lease)));
    doc.insert("storage", Item::Table(storage_table(&scenario.storage)));
    doc.insert("workers", Item::Table(workers_table(&scenario.workers)));
    doc.insert("network", Item::Table(network_table(&scenario.network)));
    doc.insert("clocks", Item::Table(clocks_table(&scenario.clocks)));
    doc.insert("faults", Item::Table(faults_table(&scenario.faults)));
    doc.insert("expect", Item::Table(expect_table(&scenario.expect)));
    doc.to_string()
}

/// The `[lease]` table.
fn lease_table(lease: &LeaseSpec) -> Table {
    let mut table = Table::new();
    if let Some(preset) = lease.preset {
        table.insert("preset", value(file_name(&preset)));
    }
    table.insert("ttl_ms", value(int(lease.ttl_ms)));
    table.insert("min_ttl_ms", value(int(lease.min_ttl_ms)));
    table.insert("max_ttl_ms", value(int(lease.max_ttl_ms)));
    table.insert("expiry_factor", value(int(lease.expiry_factor)));
    table.insert("expiry_check_ms", value(int(lease.expiry_check_ms)));
    table.insert("lock_delay_ms", value(int(lease.lock_delay_ms)));
    table.insert("election_timeout_ms", value(int(lease.election_timeout_ms)));
    if lease.restart_election_ms > 0 {
        table.insert("restart_election_ms", value(int(lease.restart_election_ms)));
    }
    table.insert("token_source", value(file_name(&lease.token_source)));
    if let TokenSource::WrappingCounter { bits } = lease.token_source {
        table.insert("token_bits", value(i64::from(bits)));
    }
    table.insert("token_scope", value(file_name(&lease.token_scope)));
    table.insert("on_restart", value(file_name(&lease.on_restart)));
    table.insert("expired_by", value(file_name(&lease.expired_by)));
    table.insert("holder_identity", value(file_name(&lease.holder_identity)));
    if !lease.acquire.is_default() {
        table.insert("acquire", value(file_name(&lease.acquire)));
    }
    table
}

/// The `[storage]` table.
fn storage_table(storage: &StorageSpec) -> Table {
    let mut table = Table::new();
    table.insert("fencing", value(file_name(&storage.fencing)));
    table.insert("max_token", value(file_name(&storage.max_token)));
    table.insert("compare_scope", value(file_name(&storage.compare_scope)));
    if !storage.proxy_bypass.is_empty() {
        table.insert("proxy_bypass", value(strings(&storage.proxy_bypass)));
    }
    table
}

/// The `[workers]` table.
fn workers_table(workers: &WorkerSpec) -> Table {
    let mut table = Table::new();
    table.insert("count", value(int(workers.count as u64)));
    table.insert("resources", value(strings(&workers.resources)));
    if let LeaseScopeSpec::Single(name) = &workers.lease_scope {
        table.insert("shared_lease", value(name.as_str()));
    }
    table.insert("work_ms", value(dist(&workers.work_ms)));
    table.insert(
        "writes_per_lease",
        value(i64::from(workers.writes_per_lease)),
    );
    table.insert("renew_every_ms", value(int(workers.renew_every_ms)));
    table.insert("renew_deadline_ms", value(int(workers.renew_deadline_ms)));
    table.insert(
        "stop_on_renew_failure",
        value(workers.stop_on_renew_failure),
    );
    table.insert(
        "check_lease_before_write",
        value(workers.check_lease_before_write),
    );
    table.insert(
        "recheck_deadline_before_write",
        value(workers.recheck_deadline_before_write),
    );
    table.insert("deadline_from", value(file_name(&workers.deadline_from)));
    table.insert("request_timeout_ms", value(int(workers.request_timeout_ms)));
    table.insert("acquire_retry_ms", value(int(workers.acquire_retry_ms)));
    table.insert("acquire_retry_jitter", value(workers.acquire_retry_jitter));
    table.insert("side_effects", value(file_name(&workers.side_effects)));
    table
}

/// The `[network]` table.
fn network_table(network: &NetworkSpec) -> Table {
    let mut table = Table::new();
    table.insert("latency_ms", value(dist(&network.latency.base)));
    table.insert(
        "spike_probability",
        value(network.latency.spike_probability),
    );
    table.insert(
        "spikes_ms",
        value(network.latency.spikes_ms.iter().copied().collect::<Array>()),
    );
    table.insert("loss", value(network.loss));
    table.insert("duplicate", value(network.duplicate));
    table
}

/// The `[clocks]` table.
fn clocks_table(clocks: &ClocksSpec) -> Table {
    let mut table = Table::new();
    table.insert("random_drift_ppm", value(clocks.random_drift_ppm));
    table.insert("random_offset_ms", value(clocks.random_offset_ms));
    if !clocks.nodes.is_empty() {
        let mut nodes = Table::new();
        nodes.set_implicit(true);
        for (node, clock) in &clocks.nodes {
            let mut entry = Table::new();
            entry.insert("offset_ms", value(clock.offset_ms));
            entry.insert("drift_ppm", value(clock.drift_ppm));
            nodes.insert(node, Item::Table(entry));
        }
        table.insert("nodes", Item::Table(nodes));
    }
    table
}

/// The `[faults]` table.
fn faults_table(faults: &FaultSpec) -> Table {
    let mut table = Table::new();
    table.insert("swarm", value(faults.swarm));
    if !faults.schedule.is_empty() {
        let mut schedule = ArrayOfTables::new();
        for timed in &faults.schedule {
            schedule.push(timed.to_schedule_entry());
        }
        table.insert("schedule", Item::ArrayOfTables(schedule));
    }
    if !faults.random.is_empty() {
        let mut random = ArrayOfTables::new();
        for entry in &faults.random {
            let mut item = Table::new();
            item.insert("kind", value(entry.kind.name()));
            item.insert("rate_per_min", value(entry.rate_per_min));
            item.insert("duration_ms", value(dist(&entry.duration_ms)));
            item.insert("nodes", value(strings(&entry.nodes)));
            if entry.kind == crate::fault::FaultKind::Partition {
                item.insert("one_way_probability", value(entry.one_way_probability));
            }
            random.push(item);
        }
        table.insert("random", Item::ArrayOfTables(random));
    }
    if let Some(outage) = &faults.outage {
        let mut item = Table::new();
        item.insert("form", value(outage.form.name()));
        item.insert("duration_ms", value(outage.duration_ms));
        table.insert("outage", Item::Table(item));
    }
    table
}

/// The `[expect]` table.
fn expect_table(expect: &Expect) -> Table {
    let mut table = Table::new();
    match &expect.outcome {
        Outcome::Safe => {
            table.insert("safe", value(true));
        }
        Outcome::Violates(list) => {
            let names: Array = list.iter().map(|i| i.to_string()).collect();
            table.insert("violates", value(names));
        }
    }
    if !expect.coverage.is_empty() {
        let names: Array = expect.coverage.iter().map(|c| c.name()).collect();
        table.insert("coverage", value(names));
    }
    if !expect.never.is_empty() {
        let names: Array = expect.never.iter().map(|c| c.name()).collect();
        table.insert("never", value(names));
    }
    table
}

/// Integers in scenario files are TOML's signed 64-bit ones; a resolved value came from one.
fn int(n: u64) -> i64 {
    i64::try_from(n).expect("resolved integers came from the file's i64")
}

fn strings(items: &[String]) -> Array {
    items.iter().map(String::as_str).collect()
}

/// A distribution as a file writes it: a bare number for a constant, else an inline table.
fn dist(dist: &Dist) -> Value {
    let mut table = InlineTable::new();
    match dist {
        &Dist::Const { value } => return Value::from(value),
        &Dist::Uniform { min, max } => {
            table.insert("dist", "uniform".into());
            table.insert("min", min.into());
            table.insert("max", max.into());
        }
        &Dist::Lognormal { median, p99 } => {
            table.insert("dist", "lognormal".into());
            table.insert("median", median.into());
            table.insert("p99", p99.into());
        }
        &Dist::Exponential { mean } => {
            table.insert("dist", "exponential".into());
            table.insert("mean", mean.into());
        }
        Dist::Empirical { quantiles } => {
            table.insert("dist", "empirical".into());
            let points: Array = quantiles
                .iter()
                .map(|&[p, ms]| Value::Array(Array::from_iter([p, ms])))
                .collect();
            table.insert("quantiles", points.into());
        }
    }
    Value::InlineTable(table)
}

/// The name a value has in scenario files: its serde kebab-case form, or the `kind` of an
/// internally tagged enum (`token_source`).
fn file_name<T: Serialize>(value: &T) -> String {
    match serde_json::to_value(value) {
        Ok(serde_json::Value::String(name)) => name,
        Ok(serde_json::Value::Object(fields)) => fields
            .get("kind")
            .and_then(serde_json::Value::as_str)
            .expect("tagged enums carry a kind")
            .to_string(),
        other => panic!("not a named value: {other:?}"),
    }
}
