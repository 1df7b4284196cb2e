//! The bench's yardstick (`xtask bench`): a bare madsim program that sends a given number
//! of messages over a given virtual duration and checks nothing.
//!
//! `clients` nodes each send requests to one `server` node at a fixed interval over madsim's
//! own network (`madsim::net::Endpoint`) and wait for the reply with a timeout; the server
//! answers every request from a task of its own, as a hand-written request/reply service on
//! madsim would. Like a harness seed, each baseline seed runs on a fresh thread with a fresh
//! runtime. It records no history, draws no faults, and judges nothing: what it costs per
//! message is madsim's own floor for this traffic.

use std::{
    net::{IpAddr, Ipv4Addr, SocketAddr},
    sync::{
        atomic::{AtomicU64, Ordering},
        Arc,
    },
    time::Duration,
};

use madsim::{
    net::Endpoint,
    runtime::{Handle, Runtime},
    time::TimeHandle,
};

/// The traffic the baseline reproduces.
#[derive(Clone, Debug)]
pub struct BaselineSpec {
    /// Nodes that send requests (the harness's workers).
    pub clients: usize,
    /// Virtual time the traffic is spread over.
    pub duration: Duration,
    /// Messages to send in total, requests and replies (rounded up to whole request/reply
    /// pairs per client).
    pub messages: u64,
    /// One-way latency range of madsim's network.
    pub latency: std::ops::Range<Duration>,
}

/// What a baseline seed did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BaselineResult {
    /// Messages sent (requests and replies).
    pub messages: u64,
}

const PORT: u16 = 7000;
const REQUEST: u64 = 1;
const REPLY: u64 = 2;

fn server_addr() -> SocketAddr {
    SocketAddr::new(IpAddr::V4(Ipv4Addr::new(10, 0, 0, 1)), PORT)
}

/// Runs one baseline seed on a fresh thread with a fresh runtime.
pub fn run_baseline(seed: u64, spec: BaselineSpec) -> BaselineResult {
    std::thread::Builder::new()
        .name(format!("baseline-{seed}"))
        .spawn(move || simulate(seed, spec))
        .expect("spawn baseline thread")
        .join()
        .expect("the baseline does not panic")
}

fn simulate(seed: u64, spec: BaselineSpec) -> BaselineResult {
    let mut config = madsim::Config::default();
    config.net.send_latency = spec.latency.clone();
    let runtime = Runtime::with_seed_and_config(seed, config);
    let sent = Arc::new(AtomicU64::new(0));
    let clients = spec.clients.max(1) as u64;
    // Each request brings a reply: requests per client, rounded up.
    let per_client = spec.messages.div_ceil(2 * clients).max(1);
    let interval = spec.duration / u32::try_from(per_client).unwrap_or(u32::MAX);
    let timeout = interval.max(Duration::from_millis(1)) * 4;
    let counter = sent.clone();
    runtime.block_on(async move {
        let handle = Handle::current();
        let server_sent = counter.clone();
        let _server = handle
            .create_node()
            .name("server")
            .ip(server_addr().ip())
            .init(move || serve(server_sent.clone()))
            .build();
        let mut nodes = Vec::new();
        for index in 0..clients {
            let client_sent = counter.clone();
            let ip = IpAddr::V4(Ipv4Addr::new(10, 0, 1, (index + 1) as u8));
            nodes.push(
                handle
                    .create_node()
                    .name(format!("client-{index}"))
                    .ip(ip)
                    .init(move || request_loop(client_sent.clone(), per_client, interval, timeout))
                    .build(),
            );
        }
        madsim::time::sleep(spec.duration + timeout * 2).await;
    });
    drop(runtime);
    BaselineResult {
        messages: sent.load(Ordering::Relaxed),
    }
}

async fn serve(sent: Arc<AtomicU64>) {
    let endpoint = Arc::new(
        Endpoint::bind(SocketAddr::new(IpAddr::V4(Ipv4Addr::UNSPECIFIED), PORT))
            .await
            .expect("bind the server"),
    );
    let mut buf = [0u8; 64];
    loop {
        let Ok((len, from)) = endpoint.recv_from(REQUEST, &mut buf).await else {
            return;
        };
        let reply: Vec<u8> = buf[..len].to_vec();
        let endpoint = endpoint.clone();
        let sent = sent.clone();
        madsim::task::spawn(async move {
            if endpoint.send_to(from, REPLY, &reply).await.is_ok() {
                sent.fetch_add(1, Ordering::Relaxed);
            }
        });
    }
}

async fn request_loop(sent: Arc<AtomicU64>, requests: u64, interval: Duration, timeout: Duration) {
    let endpoint = Endpoint::bind(SocketAddr::new(IpAddr::V4(Ipv4Addr::UNSPECIFIED), 0))
        .await
        .expect("bind a client");
    let mut buf = [0u8; 64];
    let start = TimeHandle::current().now_instant();
    for request in 0..requests {
        // A fixed schedule: a slow reply delays no later request.
        madsim::time::sleep_until(start + interval * (request as u32 + 1)).await;
        let body = request.to_le_bytes();
        if endpoint
            .send_to(server_addr(), REQUEST, &body)
            .await
            .is_ok()
        {
            sent.fetch_add(1, Ordering::Relaxed);
        }
        // A reply that does not come in time is given up on, as a real client would.
        let _ = madsim::time::timeout(timeout, endpoint.recv_from(REPLY, &mut buf)).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sends_the_requested_messages() {
        let spec = BaselineSpec {
            clients: 3,
            duration: Duration::from_secs(2),
            messages: 600,
            latency: Duration::from_micros(500)..Duration::from_millis(5),
        };
        let result = run_baseline(1, spec);
        // 100 requests per client, each answered: every message was sent.
        assert_eq!(result.messages, 600);
    }
}
