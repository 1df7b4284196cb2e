//! The message layer: per-message latency (base + rare spikes), loss, duplication,
//! partitions (symmetric or one-way) and hold-then-release, on top of madsim's virtual time.
//!
//! madsim's own network has one global latency; fencesim needs per-message draws from its
//! own RNG stream and a hold buffer, so messages in flight wait in one queue, ordered by
//! delivery time and then by send order, emptied by a single task on a dedicated `net` node
//! that no fault ever touches (no task and no timer per message: the carrier sleeps until
//! the earliest delivery and is woken early only by a message due before it). Faults are
//! evaluated when a message is sent: a message already in flight when a partition starts is
//! still delivered, as on a real wire.

use std::{
    cmp::Reverse,
    collections::{BTreeMap, BinaryHeap, VecDeque},
    sync::{
        atomic::{AtomicU64, Ordering},
        Arc, Mutex,
    },
    time::Duration,
};

use fencesim_model::{ms_to_ns, rng::Rng};
use fencesim_planted::{active, Mutant};
use fencesim_scenario::{NetworkSpec, Scenario};
use futures::channel::mpsc::{UnboundedReceiver, UnboundedSender};
use madsim::runtime::NodeHandle;
use rand::Rng as _;

use crate::{
    protocol::Envelope,
    wait::{lock, Alarm, TrueTime},
};

/// One active partition: messages from `from` to `to` are dropped (and back, unless one-way).
#[derive(Clone, Debug)]
struct Cut {
    id: u64,
    from: Vec<String>,
    /// Empty: every node not in `from`.
    to: Vec<String>,
    one_way: bool,
}

impl Cut {
    fn side_b_contains(&self, node: &str) -> bool {
        if self.to.is_empty() {
            !self.from.iter().any(|n| n == node)
        } else {
            self.to.iter().any(|n| n == node)
        }
    }

    fn blocks(&self, from: &str, to: &str) -> bool {
        let forward = self.from.iter().any(|n| n == from) && self.side_b_contains(to);
        let backward = self.from.iter().any(|n| n == to) && self.side_b_contains(from);
        forward || (!self.one_way && backward)
    }
}

/// The messages in flight and when the carrier will next look at them.
///
/// The heap orders small `(due time, send sequence)` keys; the envelopes themselves stay put
/// in `slots`, indexed by sequence number, so sifting the heap never moves a message.
#[derive(Default)]
struct Queue {
    /// `(at_ns, seq)`: due at `at_ns` (true time); `seq` orders equal times by send order.
    heap: BinaryHeap<Reverse<(u64, u64)>>,
    /// The envelope sent with sequence number `base + i` at `i`; `None` once delivered.
    slots: VecDeque<Option<Envelope>>,
    base: u64,
    next_seq: u64,
    /// The delivery time the carrier sleeps until (`None`: it waits for a message).
    armed_ns: Option<u64>,
}

impl Queue {
    fn push(&mut self, at_ns: u64, envelope: Envelope) {
        let seq = self.next_seq;
        self.next_seq += 1;
        self.slots.push_back(Some(envelope));
        self.heap.push(Reverse((at_ns, seq)));
    }

    /// The next message due at or before `now`, if any.
    fn pop_due(&mut self, now: u64) -> Option<Envelope> {
        let &Reverse((at_ns, seq)) = self.heap.peek()?;
        if at_ns > now {
            return None;
        }
        self.heap.pop();
        let envelope = self.slots[(seq - self.base) as usize]
            .take()
            .expect("each sequence number is delivered once");
        while matches!(self.slots.front(), Some(None)) {
            self.slots.pop_front();
            self.base += 1;
        }
        Some(envelope)
    }

    fn next_due(&self) -> Option<u64> {
        self.heap.peek().map(|&Reverse((at_ns, _))| at_ns)
    }
}

/// How many holds are on a link, and the messages it keeps.
type Held = (u32, Vec<Envelope>);

pub(crate) struct Net {
    spec: NetworkSpec,
    rng: Mutex<Rng>,
    mailboxes: Mutex<BTreeMap<String, UnboundedSender<Envelope>>>,
    cuts: Mutex<Vec<Cut>>,
    /// Held links: how many holds are on each, and the messages kept.
    holds: Mutex<BTreeMap<(String, String), Held>>,
    carrier: Mutex<Option<NodeHandle>>,
    queue: Mutex<Queue>,
    /// Rung when a message is due before the time the carrier sleeps until.
    alarm: Alarm,
    /// Messages put on the wire (each copy of a duplicate, each released held message).
    carried: AtomicU64,
    /// The run's true time: delivery times are true time.
    time: TrueTime,
}

impl Net {
    pub fn new(scenario: &Scenario, seed: u64, time: TrueTime) -> Self {
        Net {
            spec: scenario.network.clone(),
            rng: Mutex::new(fencesim_model::rng::stream(
                seed,
                fencesim_model::nodes::NET,
            )),
            mailboxes: Mutex::new(BTreeMap::new()),
            cuts: Mutex::new(Vec::new()),
            holds: Mutex::new(BTreeMap::new()),
            carrier: Mutex::new(None),
            queue: Mutex::new(Queue::default()),
            alarm: Alarm::default(),
            carried: AtomicU64::new(0),
            time,
        }
    }

    /// Sets the node whose task carries messages in flight, and starts that task.
    pub fn set_carrier(self: &Arc<Self>, node: NodeHandle) {
        let net = self.clone();
        node.spawn(async move { net.deliver_forever().await });
        *lock(&self.carrier) = Some(node);
    }

    /// (Re)opens `node`'s mailbox; messages to its previous incarnation are lost with it.
    pub fn open_mailbox(&self, node: &str) -> UnboundedReceiver<Envelope> {
        let (sender, receiver) = futures::channel::mpsc::unbounded();
        lock(&self.mailboxes).insert(node.to_string(), sender);
        receiver
    }

    pub fn partition(&self, id: u64, from: Vec<String>, to: Vec<String>, one_way: bool) {
        lock(&self.cuts).push(Cut {
            id,
            from,
            to,
            one_way,
        });
    }

    pub fn heal(&self, id: u64) {
        lock(&self.cuts).retain(|cut| cut.id != id);
    }

    /// Starts holding `from` → `to`. Holds of one link compose: the link stays held until
    /// every hold on it has ended.
    pub fn hold(&self, from: &str, to: &str) {
        lock(&self.holds)
            .entry((from.to_string(), to.to_string()))
            .or_default()
            .0 += 1;
    }

    /// Ends a hold and returns the messages the link kept, in send order, once no other hold
    /// on the link remains (until then, none: they stay held).
    pub fn take_held(&self, from: &str, to: &str) -> Vec<Envelope> {
        let key = (from.to_string(), to.to_string());
        let mut holds = lock(&self.holds);
        let Some((count, _)) = holds.get_mut(&key) else {
            return Vec::new();
        };
        *count -= 1;
        if *count > 0 {
            return Vec::new();
        }
        let held = holds.remove(&key).map(|(_, held)| held).unwrap_or_default();
        if active(Mutant::NetHeldMessagesDropped) {
            return Vec::new();
        }
        held
    }

    /// Messages carried so far (delivered or in flight; lost and cut ones are not counted).
    pub fn carried(&self) -> u64 {
        self.carried.load(Ordering::Relaxed)
    }

    fn delay(&self) -> Duration {
        let mut rng = lock(&self.rng);
        let mut ms = self.spec.latency.base.sample(&mut rng);
        if !self.spec.latency.spikes_ms.is_empty()
            && self.spec.latency.spike_probability > 0.0
            && rng.gen_bool(self.spec.latency.spike_probability)
        {
            let index = rng.gen_range(0..self.spec.latency.spikes_ms.len());
            ms += self.spec.latency.spikes_ms[index];
        }
        Duration::from_nanos(ms_to_ns(ms))
    }
}

impl Net {
    /// Sends a message: dropped if a partition cuts the link or the loss draw says so, kept if
    /// the link is held, otherwise delivered after a drawn delay (twice if duplicated).
    pub fn send(&self, envelope: Envelope) {
        let net = self;
        let mut cut = lock(&net.cuts)
            .iter()
            .any(|cut| cut.blocks(&envelope.from, &envelope.to));
        if active(Mutant::NetPartitionIgnored) {
            // The planted bug: partitions drop nothing.
            cut = false;
        }
        if cut {
            return;
        }
        let (lost, duplicated) = {
            let mut rng = lock(&net.rng);
            let lost = net.spec.loss > 0.0 && rng.gen_bool(net.spec.loss);
            let duplicated = net.spec.duplicate > 0.0 && rng.gen_bool(net.spec.duplicate);
            (lost, duplicated)
        };
        if lost {
            return;
        }
        {
            let mut holds = lock(&net.holds);
            // Few links are ever held: a scan, with no key to build per message.
            if let Some((_, (_, held))) = holds
                .iter_mut()
                .find(|((from, to), _)| **from == *envelope.from && **to == *envelope.to)
            {
                held.push(envelope);
                return;
            }
        }
        if duplicated {
            net.carry(envelope.clone());
        }
        net.carry(envelope);
    }

    /// Delivers a message after a fresh delay, ignoring partitions and holds (used for held
    /// messages being released, and by `send`).
    pub fn carry(&self, envelope: Envelope) {
        let net = self;
        let delay = net.delay();
        net.carried.fetch_add(1, Ordering::Relaxed);
        let at_ns = net.time.now_ns() + delay.as_nanos() as u64;
        let mut queue = lock(&net.queue);
        queue.push(at_ns, envelope);
        if queue.armed_ns.is_none_or(|armed| at_ns < armed) {
            queue.armed_ns = Some(at_ns);
            drop(queue);
            net.alarm.ring();
        }
    }

    /// The carrier: delivers every message that is due, then sleeps until the next one (or until
    /// a message due earlier arrives).
    async fn deliver_forever(&self) {
        let net = self;
        loop {
            let now = net.time.now_ns();
            let next = {
                let mut queue = lock(&net.queue);
                while let Some(envelope) = queue.pop_due(now) {
                    if let Some(mailbox) = lock(&net.mailboxes).get(&*envelope.to) {
                        // A closed mailbox means the node is down: the message is lost, as on a
                        // wire.
                        let _ = mailbox.unbounded_send(envelope);
                    }
                }
                let next = queue.next_due();
                queue.armed_ns = next;
                next
            };
            net.alarm.sleep_until(&net.time, now, next).await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cut(from: &[&str], to: &[&str], one_way: bool) -> Cut {
        Cut {
            id: 0,
            from: from.iter().map(|s| s.to_string()).collect(),
            to: to.iter().map(|s| s.to_string()).collect(),
            one_way,
        }
    }

    #[test]
    fn isolation_blocks_both_ways() {
        let c = cut(&["worker-0"], &[], false);
        assert!(c.blocks("worker-0", "coordinator"));
        assert!(c.blocks("storage", "worker-0"));
        assert!(!c.blocks("worker-1", "storage"));
    }

    #[test]
    fn one_way_blocks_only_outbound() {
        let c = cut(&["worker-0"], &["storage"], true);
        assert!(c.blocks("worker-0", "storage"));
        assert!(!c.blocks("storage", "worker-0"));
        assert!(!c.blocks("worker-0", "coordinator"));
    }
}
