//! State-space coverage over seeds: which abstract protocol states
//! ([`fencesim_check::abstract_state`]) and transitions the seeds reached, how many seeds
//! reached each and the smallest seed that did.
//!
//! [`StateSpaceAcc`] is part of a [`SummaryState`](super::SummaryState): counted one seed at a
//! time and merged exactly, because the saturation curve and the rare states are computed at
//! the end from the per-entry counts and first seeds alone. It keeps at most
//! [`MAX_STATES`] states and [`MAX_TRANSITIONS`] transitions: those with the smallest
//! `(first seed, key)`, which is what counting in seed order keeps. Past either limit it sets
//! `truncated`; the distinct counts are then lower bounds, and a merge of shards may count
//! fewer seeds for an entry one shard had to drop.

use std::collections::BTreeMap;

use fencesim_check::abstract_state::Visited;
use fencesim_scenario::SeedRange;
use serde::{Deserialize, Serialize};

/// The most distinct abstract states a summary keeps.
pub const MAX_STATES: usize = 10_000;
/// The most distinct transitions a summary keeps.
pub const MAX_TRANSITIONS: usize = 40_000;
/// A state is rare when fewer than this share of the seeds (in percent) reached it.
pub const RARE_PERCENT: u64 = 1;

/// How many seeds reached an abstract state or transition, and the smallest that did.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Reach {
    /// Seeds that reached it.
    pub seeds: u64,
    /// The smallest seed that reached it.
    pub first_seed: u64,
}

/// The abstract states and transitions counted over seeds (see the module doc).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StateSpaceAcc {
    /// State (its canonical text) → reach.
    #[serde(default)]
    states: BTreeMap<String, Reach>,
    /// Transition `"<from id>><to id>"` (each a [`state_id`]) → reach.
    #[serde(default)]
    transitions: BTreeMap<String, Reach>,
    /// Some state or transition reached was not kept.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    truncated: bool,
    /// The last seed counted: a repeated seed (a merge mistake) counts once.
    #[serde(skip)]
    previous_seed: Option<u64>,
}

/// The entries, not the bookkeeping of the last push.
impl PartialEq for StateSpaceAcc {
    fn eq(&self, other: &StateSpaceAcc) -> bool {
        (&self.states, &self.transitions, self.truncated)
            == (&other.states, &other.transitions, other.truncated)
    }
}

/// A state's short id: FNV-1a 64 of its canonical text, as 16 hex digits.
pub fn state_id(text: &str) -> String {
    format!("{:016x}", fencesim_model::fnv::hash(text.as_bytes()))
}

/// A transition's key: the two states' ids joined by `>`.
pub fn transition_key(from: &str, to: &str) -> String {
    format!("{}>{}", state_id(from), state_id(to))
}

impl StateSpaceAcc {
    /// Counts one seed's visited states; seeds come in ascending order.
    pub fn push(&mut self, seed: u64, visited: &Visited) {
        if self.previous_seed == Some(seed) {
            return;
        }
        self.previous_seed = Some(seed);
        for text in &visited.states {
            self.truncated |= !reach(&mut self.states, text, seed, MAX_STATES);
        }
        let mut keys: Vec<String> = visited
            .transitions
            .iter()
            .map(|(from, to)| transition_key(from, to))
            .collect();
        // Within a seed, entries are kept in key order, as a merge would keep them.
        keys.sort();
        for key in keys {
            self.truncated |= !reach(&mut self.transitions, &key, seed, MAX_TRANSITIONS);
        }
    }

    /// Adds what `other` counted (other seeds): counts add, first seeds take the smaller.
    pub fn merge(&mut self, other: &StateSpaceAcc) {
        merge_map(&mut self.states, &other.states);
        merge_map(&mut self.transitions, &other.transitions);
        self.truncated |= other.truncated;
        self.truncated |= cap(&mut self.states, MAX_STATES);
        self.truncated |= cap(&mut self.transitions, MAX_TRANSITIONS);
        self.previous_seed = None;
    }

    /// Checks the names a hand-edited report could fabricate: every state a canonical state
    /// text ([`fencesim_check::abstract_state::is_canonical`]) and every transition two state
    /// ids (of states the report lists, unless some were not kept).
    pub fn check_names(&self) -> Result<(), String> {
        for key in self.states.keys() {
            fencesim_check::abstract_state::is_canonical(key).map_err(|expected| {
                format!("state.state_space.states.{key:?}: expected {expected}")
            })?;
        }
        let ids: std::collections::BTreeSet<String> =
            self.states.keys().map(|text| state_id(text)).collect();
        let is_id = |id: &str| id.len() == 16 && id.bytes().all(|b| b.is_ascii_hexdigit());
        for key in self.transitions.keys() {
            let pair = key.split_once('>').filter(|(a, b)| is_id(a) && is_id(b));
            let Some((from, to)) = pair else {
                return Err(format!(
                    "state.state_space.transitions.{key:?}: expected two state ids (16 hex \
                     digits each) joined by `>`"
                ));
            };
            let listed = ids.contains(from) && ids.contains(to);
            if !self.truncated && !listed {
                return Err(format!(
                    "state.state_space.transitions.{key:?}: expected a transition between \
                     states the report lists"
                ));
            }
        }
        Ok(())
    }

    /// Checks what a hand-edited report could break: every count positive and at most
    /// `runs`, no more entries than the limits.
    pub fn check_consistent(&self, runs: u64) -> Result<(), String> {
        for (name, map, max) in [
            ("states", &self.states, MAX_STATES),
            ("transitions", &self.transitions, MAX_TRANSITIONS),
        ] {
            if map.len() > max {
                return Err(format!(
                    "state.state_space.{name}: expected at most {max} entries, got {}",
                    map.len()
                ));
            }
            if let Some((key, r)) = map.iter().find(|(_, r)| r.seeds == 0 || r.seeds > runs) {
                return Err(format!(
                    "state.state_space.{name}.{key:?}: expected between 1 and runs ({runs}) seeds, got {}",
                    r.seeds
                ));
            }
        }
        Ok(())
    }

    /// State (its canonical text) → how many seeds reached it and the first that did.
    pub fn states(&self) -> &BTreeMap<String, Reach> {
        &self.states
    }

    /// Transition (`"<from id>><to id>"`, see [`transition_key`]) → reach.
    pub fn transitions(&self) -> &BTreeMap<String, Reach> {
        &self.transitions
    }

    /// Whether some state or transition reached was not kept (the counts are lower bounds).
    pub fn truncated(&self) -> bool {
        self.truncated
    }

    /// Every seed the entries name, for checking them against the seeds counted.
    pub fn named_seeds(&self) -> impl Iterator<Item = u64> + '_ {
        self.states
            .values()
            .chain(self.transitions.values())
            .map(|r| r.first_seed)
    }

    /// The summary's view over `seeds` (`runs` outcomes counted).
    pub fn finish(&self, seeds: SeedRange, runs: u64) -> StateSpace {
        let span = seeds.end.saturating_sub(seeds.start);
        let block = block_seeds(span);
        let blocks = span.div_ceil(block) as usize;
        let mut saturation: Vec<Block> = (0..blocks)
            .map(|k| Block {
                first_seed: seeds.start + k as u64 * block,
                new_states: 0,
                new_transitions: 0,
                states: 0,
            })
            .collect();
        let at = |seed: u64| (seed.saturating_sub(seeds.start) / block) as usize;
        for r in self.states.values() {
            if let Some(b) = saturation.get_mut(at(r.first_seed)) {
                b.new_states += 1;
            }
        }
        for r in self.transitions.values() {
            if let Some(b) = saturation.get_mut(at(r.first_seed)) {
                b.new_transitions += 1;
            }
        }
        let mut total = 0;
        for b in &mut saturation {
            total += b.new_states;
            b.states = total;
        }
        let mut rare: Vec<RareState> = self
            .states
            .iter()
            .filter(|(_, r)| r.seeds * 100 < runs * RARE_PERCENT)
            .map(|(text, r)| RareState {
                state: text.clone(),
                id: state_id(text),
                seeds: r.seeds,
                first_seed: r.first_seed,
            })
            .collect();
        rare.sort_by(|a, b| (a.seeds, &a.state).cmp(&(b.seeds, &b.state)));
        StateSpace {
            states: self.states.len() as u64,
            transitions: self.transitions.len() as u64,
            truncated: self.truncated,
            block_seeds: block,
            saturation,
            rare,
        }
    }
}

/// Counts `seed` for `key`; false when the key is new and the map is full (not kept).
fn reach(map: &mut BTreeMap<String, Reach>, key: &str, seed: u64, max: usize) -> bool {
    if let Some(r) = map.get_mut(key) {
        r.seeds += 1;
        return true;
    }
    if map.len() >= max {
        return false;
    }
    map.insert(
        key.to_string(),
        Reach {
            seeds: 1,
            first_seed: seed,
        },
    );
    true
}

fn merge_map(into: &mut BTreeMap<String, Reach>, other: &BTreeMap<String, Reach>) {
    for (key, r) in other {
        into.entry(key.clone())
            .and_modify(|mine| {
                mine.seeds += r.seeds;
                mine.first_seed = mine.first_seed.min(r.first_seed);
            })
            .or_insert(*r);
    }
}

/// Keeps the `max` entries with the smallest `(first seed, key)`; true if any was dropped.
fn cap(map: &mut BTreeMap<String, Reach>, max: usize) -> bool {
    if map.len() <= max {
        return false;
    }
    let mut order: Vec<(u64, String)> = map
        .iter()
        .map(|(key, r)| (r.first_seed, key.clone()))
        .collect();
    order.sort();
    for (_, key) in &order[max..] {
        map.remove(key);
    }
    true
}

/// Seeds per block of the saturation curve: 1,000 from 20,000 seeds on, else the smallest of
/// 1, 2, 5, 10, 20, 50, … that makes at most 20 blocks.
pub fn block_seeds(span: u64) -> u64 {
    let mut block = 1;
    let mut k = 0;
    while block < 1_000 && span.div_ceil(block) > 20 {
        k += 1;
        block = [1, 2, 5][k % 3] * 10u64.pow((k / 3) as u32);
    }
    block
}

/// State-space coverage of a sweep, as `summary.json`'s `state_space`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct StateSpace {
    /// Distinct abstract states reached (a lower bound when `truncated`).
    pub states: u64,
    /// Distinct transitions between them reached (a lower bound when `truncated`).
    pub transitions: u64,
    /// More were reached than a summary keeps ([`MAX_STATES`], [`MAX_TRANSITIONS`]).
    pub truncated: bool,
    /// Seeds per block of `saturation`.
    pub block_seeds: u64,
    /// Per block of seeds, in seed order: the states and transitions first reached in it.
    pub saturation: Vec<Block>,
    /// States reached by fewer than 1 % of the seeds, fewest first, each with a seed that
    /// reaches it.
    pub rare: Vec<RareState>,
}

/// One block of seeds of the saturation curve.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Block {
    /// Its first seed (the block is `block_seeds` seeds from here, the last one shorter).
    pub first_seed: u64,
    /// States no earlier seed reached.
    pub new_states: u64,
    /// Transitions no earlier seed reached.
    pub new_transitions: u64,
    /// States reached up to the end of this block.
    pub states: u64,
}

/// A state few seeds reached.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RareState {
    /// Its canonical text.
    pub state: String,
    /// Its id ([`state_id`]).
    pub id: String,
    /// Seeds that reached it.
    pub seeds: u64,
    /// The smallest seed that reached it (replay it to see the state).
    pub first_seed: u64,
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::*;

    /// A run that visited `states`, with a transition from the first to each other.
    fn run(states: &[&str]) -> Visited {
        Visited {
            states: states.iter().map(|s| s.to_string()).collect(),
            transitions: states[1..]
                .iter()
                .map(|to| (states[0].to_string(), to.to_string()))
                .collect(),
        }
    }

    /// Seeds 0..300: `common` in every seed, `every-50` in six, `three` in seeds 1–3 (1 %:
    /// not rare), `twice` in seeds 7 and 290, `once` in seed 250.
    fn visits(seed: u64) -> Visited {
        let mut states = vec!["common"];
        for (name, seeds) in [
            ("every-50", &[0, 50, 100, 150, 200, 250][..]),
            ("three", &[1, 2, 3]),
            ("twice", &[7, 290]),
            ("once", &[250]),
        ] {
            if seeds.contains(&seed) {
                states.push(name);
            }
        }
        run(&states)
    }

    fn counted(seeds: impl Iterator<Item = u64>) -> StateSpaceAcc {
        let mut acc = StateSpaceAcc::default();
        for seed in seeds {
            acc.push(seed, &visits(seed));
        }
        acc
    }

    const SEEDS: SeedRange = SeedRange { start: 0, end: 300 };

    #[test]
    fn counts_first_seeds_the_saturation_curve_and_rare_states_exactly() {
        let space = counted(0..300).finish(SEEDS, 300);
        assert_eq!((space.states, space.transitions), (5, 4));
        assert!(!space.truncated);
        assert_eq!(space.block_seeds, 20);
        let new: Vec<(u64, u64, u64, u64)> = space
            .saturation
            .iter()
            .map(|b| (b.first_seed, b.new_states, b.new_transitions, b.states))
            .collect();
        let mut expected: Vec<(u64, u64, u64, u64)> = (0..15).map(|k| (k * 20, 0, 0, 4)).collect();
        expected[0] = (0, 4, 3, 4);
        for entry in &mut expected[12..] {
            entry.3 = 5;
        }
        expected[12].1 = 1; // `once`, at seed 250
        expected[12].2 = 1;
        assert_eq!(new, expected);
        let rare: Vec<(&str, u64, u64)> = space
            .rare
            .iter()
            .map(|r| (r.state.as_str(), r.seeds, r.first_seed))
            .collect();
        assert_eq!(rare, [("once", 1, 250), ("twice", 2, 7)]);
        assert_eq!(space.rare[0].id, state_id("once"));
    }

    #[test]
    fn a_repeated_seed_counts_once() {
        let mut acc = counted(0..300);
        acc.push(299, &visits(299));
        assert_eq!(acc, counted(0..300));
    }

    #[test]
    fn merging_any_split_in_any_order_gives_the_whole() {
        let whole = counted(0..300);
        for n in [2, 3, 7] {
            let parts: Vec<StateSpaceAcc> = (0..n)
                .map(|k| {
                    let part = counted((0..300).filter(|seed| seed % n == k));
                    let json = serde_json::to_string(&part).unwrap();
                    serde_json::from_str(&json).unwrap()
                })
                .collect();
            for order in [false, true] {
                let mut merged = StateSpaceAcc::default();
                let mut parts = parts.clone();
                if order {
                    parts.reverse();
                }
                for part in &parts {
                    merged.merge(part);
                }
                assert_eq!(merged, whole, "{n} parts");
                assert_eq!(merged.finish(SEEDS, 300), whole.finish(SEEDS, 300));
            }
        }
    }

    #[test]
    fn past_the_limit_it_keeps_the_earliest_and_says_so() {
        let many: Vec<String> = (0..MAX_STATES - 1).map(|i| format!("a{i:05}")).collect();
        let first = Visited {
            states: many.iter().cloned().collect(),
            transitions: BTreeSet::new(),
        };
        let second = run(&["b1", "b0"]);
        let mut whole = StateSpaceAcc::default();
        whole.push(0, &first);
        assert!(!whole.truncated);
        whole.push(1, &second);
        assert!(whole.truncated);
        assert_eq!(whole.states.len(), MAX_STATES);
        assert!(whole.states.contains_key("b0") && !whole.states.contains_key("b1"));
        let space = whole.finish(SeedRange { start: 0, end: 2 }, 2);
        assert!(space.truncated);
        assert_eq!(space.states, MAX_STATES as u64);

        // Shards keep the same entries: the smallest (first seed, key).
        let (mut left, mut right) = (StateSpaceAcc::default(), StateSpaceAcc::default());
        left.push(0, &first);
        right.push(1, &second);
        assert!(!left.truncated && !right.truncated);
        right.merge(&left);
        assert_eq!(right, whole);
        assert!(right.check_consistent(2).is_ok());
    }

    #[test]
    fn blocks_are_round_numbers_at_most_twenty_or_a_thousand_seeds() {
        let cases = [
            (0, 1),
            (1, 1),
            (20, 1),
            (21, 2),
            (300, 20),
            (1_000, 50),
            (10_000, 500),
            (20_001, 1_000),
            (1_000_000, 1_000),
        ];
        for (span, block) in cases {
            assert_eq!(block_seeds(span), block, "{span} seeds");
        }
    }

    #[test]
    fn a_fabricated_state_or_transition_is_refused() {
        let held = "[lease=held store=below inflight=none: holder(running)]";
        let free = "[lease=free store=empty inflight=none]";
        let mut acc = StateSpaceAcc::default();
        acc.push(0, &run(&[held, free]));
        assert_eq!(acc.check_names(), Ok(()));
        let mut made_up = acc.clone();
        made_up.states.insert(
            "[lease=seized store=below inflight=none]".into(),
            Reach {
                seeds: 1,
                first_seed: 0,
            },
        );
        let error = made_up.check_names().unwrap_err();
        assert!(
            error.contains("seized") && error.contains("one of free, held"),
            "{error}"
        );
        let mut stray = acc.clone();
        stray.transitions.insert(
            format!("{}>{}", state_id(held), "0123456789abcdef"),
            Reach {
                seeds: 1,
                first_seed: 0,
            },
        );
        let error = stray.check_names().unwrap_err();
        assert!(error.contains("states the report lists"), "{error}");
        let mut garbled = acc;
        garbled.transitions.insert(
            "from>to".into(),
            Reach {
                seeds: 1,
                first_seed: 0,
            },
        );
        assert!(garbled.check_names().unwrap_err().contains("16 hex"));
    }

    #[test]
    fn an_edited_count_is_refused() {
        let mut acc = counted(0..300);
        acc.states.get_mut("once").unwrap().seeds = 301;
        let error = acc.check_consistent(300).unwrap_err();
        assert!(error.contains("\"once\""), "{error}");
    }
}
