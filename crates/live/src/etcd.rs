//! etcd 3.4 through its JSON gateway (`/v3/...`), and the etcd server process itself.

use std::{
    net::{SocketAddr, TcpListener},
    path::{Path, PathBuf},
    process::Command,
    sync::Arc,
    time::Duration,
};

use serde_json::{json, Value};

use crate::guard::Guard;
use crate::http::{base64, post, stream, unbase64, HttpError};
use crate::process::ServiceProcess;

/// Every request but the watch gives up after this long.
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(2);

/// The key a lease scope is held under.
pub fn lock_key(scope: &str) -> String {
    format!("/fencesim/lock/{scope}")
}

/// The key a resource's data lives under (`same-store-txn`).
pub fn data_key(resource: &str) -> String {
    format!("/fencesim/data/{resource}")
}

/// A gateway int64/uint64 field (sent as a JSON string), 0 when absent (proto3 default).
pub fn int(value: &Value, field: &str) -> i64 {
    match value.get(field) {
        Some(Value::String(text)) => text.parse().unwrap_or(0),
        Some(Value::Number(number)) => number.as_i64().unwrap_or(0),
        _ => 0,
    }
}

/// A base64 field decoded as UTF-8 (lossy), empty when absent.
pub fn text(value: &Value, field: &str) -> String {
    value
        .get(field)
        .and_then(Value::as_str)
        .and_then(unbase64)
        .map(|bytes| String::from_utf8_lossy(&bytes).into_owned())
        .unwrap_or_default()
}

/// The header revision of a response.
pub fn revision(response: &Value) -> i64 {
    response
        .get("header")
        .map_or(0, |header| int(header, "revision"))
}

/// A client of one etcd member.
#[derive(Clone, Copy, Debug)]
pub struct Client {
    /// The member's client address.
    pub addr: SocketAddr,
    /// How long a request (but the watch) may take: a worker's `workers.request_timeout_ms`.
    pub timeout: Duration,
}

/// What a campaign got.
#[derive(Debug)]
pub enum Campaign {
    /// The key was free: it is ours, created at this revision.
    Won {
        /// The create revision of the lock key (the token).
        revision: i64,
    },
    /// Someone holds it.
    Lost {
        /// Its value (the holder's name).
        holder: String,
    },
}

impl Client {
    /// A client of the member at `addr` with the default [`REQUEST_TIMEOUT`].
    pub fn new(addr: SocketAddr) -> Client {
        Client {
            addr,
            timeout: REQUEST_TIMEOUT,
        }
    }

    fn call(&self, path: &str, body: Value) -> Result<Value, HttpError> {
        post(self.addr, path, &body, self.timeout)
    }

    /// Whether the lock key of `scope` still exists with create revision `token`: the lease
    /// that took it under that token is alive (check-lease-before-write).
    pub fn holds(&self, scope: &str, token: i64) -> Result<bool, HttpError> {
        let response = self.call(
            "/v3/kv/range",
            json!({ "key": base64(lock_key(scope).as_bytes()) }),
        )?;
        let kv = response
            .get("kvs")
            .and_then(Value::as_array)
            .and_then(|kvs| kvs.first());
        Ok(kv.is_some_and(|kv| int(kv, "create_revision") == token))
    }

    /// The holder named in the lock key of `scope` (its value), while the key exists.
    pub fn holder(&self, scope: &str) -> Result<Option<String>, HttpError> {
        let response = self.call(
            "/v3/kv/range",
            json!({ "key": base64(lock_key(scope).as_bytes()) }),
        )?;
        Ok(response
            .get("kvs")
            .and_then(Value::as_array)
            .and_then(|kvs| kvs.first())
            .map(|kv| text(kv, "value")))
    }

    /// `LeaseGrant`: a new lease of `ttl_s` seconds (etcd raises it to its minimum silently);
    /// returns its ID and the granted TTL.
    pub fn grant(&self, ttl_s: u64) -> Result<(i64, i64), HttpError> {
        let response = self.call("/v3/lease/grant", json!({ "TTL": ttl_s.to_string() }))?;
        Ok((int(&response, "ID"), int(&response, "TTL")))
    }

    /// One `LeaseKeepAlive` round: the TTL left after it (0 or less: the lease is gone) and
    /// the header revision.
    pub fn keepalive(&self, id: i64) -> Result<i64, HttpError> {
        let response = self.call("/v3/lease/keepalive", json!({ "ID": id.to_string() }))?;
        let result = response.get("result").unwrap_or(&response);
        Ok(int(result, "TTL"))
    }

    /// `LeaseRevoke`: deletes every key attached; returns the header revision (the delete's).
    pub fn revoke(&self, id: i64) -> Result<i64, HttpError> {
        let response = self.call("/v3/lease/revoke", json!({ "ID": id.to_string() }))?;
        Ok(revision(&response))
    }

    /// Put-if-absent on the lock key with the lease attached (etcd `concurrency.Mutex`'s
    /// campaign: compare `create_revision == 0`).
    pub fn campaign(&self, scope: &str, holder: &str, lease: i64) -> Result<Campaign, HttpError> {
        let key = base64(lock_key(scope).as_bytes());
        let response = self.call(
            "/v3/kv/txn",
            json!({
                "compare": [{ "key": key, "target": "CREATE", "result": "EQUAL", "create_revision": "0" }],
                "success": [{ "request_put": { "key": key, "value": base64(holder.as_bytes()), "lease": lease.to_string() } }],
                "failure": [{ "request_range": { "key": key } }],
            }),
        )?;
        if succeeded(&response) {
            return Ok(Campaign::Won {
                revision: revision(&response),
            });
        }
        let holder = first_kv(&response).map_or_else(String::new, |kv| text(kv, "value"));
        Ok(Campaign::Lost { holder })
    }

    /// `same-store-txn`: writes `value` to the resource's key only if the lock key still has
    /// create revision `token`. `Ok(Ok(previous))` when written (the token stored before, if
    /// any), `Ok(Err(current))` when refused (the lock key's current create revision, if any).
    pub fn guarded_put(
        &self,
        scope: &str,
        resource: &str,
        token: i64,
        value: &str,
    ) -> Result<Result<Option<i64>, Option<i64>>, HttpError> {
        let lock = base64(lock_key(scope).as_bytes());
        let data = base64(data_key(resource).as_bytes());
        let response = self.call(
            "/v3/kv/txn",
            json!({
                "compare": [{ "key": lock, "target": "CREATE", "result": "EQUAL", "create_revision": token.to_string() }],
                "success": [
                    { "request_range": { "key": data } },
                    { "request_put": { "key": data, "value": base64(value.as_bytes()) } }
                ],
                "failure": [{ "request_range": { "key": lock } }],
            }),
        )?;
        let stored_token = |kv: &Value| {
            text(kv, "value")
                .split_whitespace()
                .next()
                .and_then(|t| t.parse().ok())
        };
        if succeeded(&response) {
            Ok(Ok(first_kv(&response).and_then(stored_token)))
        } else {
            Ok(Err(first_kv(&response).map(|kv| int(kv, "create_revision"))))
        }
    }

    /// Watches every key under `/fencesim/lock/` from `start_revision`, calling `each` with
    /// every event (`type`, `kv`, `prev_kv`) until it returns false or the stream ends.
    pub fn watch_locks(
        &self,
        start_revision: i64,
        mut each: impl FnMut(&Value) -> bool,
    ) -> Result<(), HttpError> {
        let prefix = "/fencesim/lock/";
        let end = "/fencesim/lock0"; // '/' + 1
        let body = json!({ "create_request": {
            "key": base64(prefix.as_bytes()),
            "range_end": base64(end.as_bytes()),
            "start_revision": start_revision.to_string(),
            "prev_kv": true,
        }});
        stream(self.addr, "/v3/watch", &body, |value| {
            let events = value
                .get("result")
                .and_then(|r| r.get("events"))
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default();
            events.iter().all(&mut each)
        })
    }

    /// Whether the member answers a range request.
    pub fn ready(&self) -> bool {
        self.call("/v3/kv/range", json!({ "key": base64(b"/") }))
            .is_ok()
    }
}

fn succeeded(response: &Value) -> bool {
    response.get("succeeded").and_then(Value::as_bool) == Some(true)
}

/// The first key-value of the first range response in a txn's responses.
fn first_kv(response: &Value) -> Option<&Value> {
    response
        .get("responses")?
        .as_array()?
        .iter()
        .find_map(|r| r.get("response_range"))?
        .get("kvs")?
        .as_array()?
        .first()
}

/// The etcd binary: `$FENCESIM_ETCD`, else `etcd` on the `PATH`.
pub fn etcd_binary() -> PathBuf {
    std::env::var_os("FENCESIM_ETCD").map_or_else(|| PathBuf::from("etcd"), PathBuf::from)
}

/// The etcd binary's version line, or why it cannot be run.
pub fn etcd_version() -> Result<String, String> {
    let binary = etcd_binary();
    let output = Command::new(&binary)
        .arg("--version")
        .output()
        .map_err(|error| format!("cannot run {}: {error}", binary.display()))?;
    let text = String::from_utf8_lossy(&output.stdout);
    Ok(text.lines().next().unwrap_or("").to_string())
}

/// A single-member etcd on loopback ports with its own data directory.
#[derive(Debug)]
pub struct Server {
    process: ServiceProcess,
    data_dir: PathBuf,
    client_port: u16,
    peer_port: u16,
    every_loopback_address: bool,
}

/// Two free loopback ports (bound, then released; etcd binds them right after).
fn free_ports() -> std::io::Result<(u16, u16)> {
    let a = TcpListener::bind("127.0.0.1:0")?;
    let b = TcpListener::bind("127.0.0.1:0")?;
    Ok((a.local_addr()?.port(), b.local_addr()?.port()))
}

impl Server {
    /// Starts etcd with its data under `dir` and waits until it answers (up to 20 s).
    /// Each etcd process is registered with `guard`, if any, which kills it if the supervisor
    /// dies.
    pub fn start(dir: &Path, guard: Option<Arc<Guard>>) -> Result<Server, String> {
        Server::start_listening(dir, guard, false)
    }

    /// [`Server::start`], listening for clients on 127.0.0.1 or, with
    /// `every_loopback_address` (in a private network namespace only: [`crate::netns`]), on
    /// every address.
    pub fn start_listening(
        dir: &Path,
        guard: Option<Arc<Guard>>,
        every_loopback_address: bool,
    ) -> Result<Server, String> {
        let (client_port, peer_port) =
            free_ports().map_err(|error| format!("no free loopback port: {error}"))?;
        let mut server = Server {
            process: ServiceProcess::new("etcd", dir.join("etcd.log"), guard),
            data_dir: dir.join("etcd-data"),
            client_port,
            peer_port,
            every_loopback_address,
        };
        server.spawn()?;
        Ok(server)
    }

    /// The client to this member.
    pub fn client(&self) -> Client {
        Client::new(SocketAddr::from(([127, 0, 0, 1], self.client_port)))
    }

    /// The etcd process id, while it runs.
    pub fn pid(&self) -> Option<u32> {
        self.process.pid()
    }

    fn spawn(&mut self) -> Result<(), String> {
        let client = format!("http://127.0.0.1:{}", self.client_port);
        let peer = format!("http://127.0.0.1:{}", self.peer_port);
        let mut command = Command::new(etcd_binary());
        command
            .arg("--name=fencesim")
            .arg(format!("--data-dir={}", self.data_dir.display()))
            .arg(if self.every_loopback_address {
                format!("--listen-client-urls=http://0.0.0.0:{}", self.client_port)
            } else {
                format!("--listen-client-urls={client}")
            })
            .arg(format!("--advertise-client-urls={client}"))
            .arg(format!("--listen-peer-urls={peer}"))
            .arg(format!("--initial-advertise-peer-urls={peer}"))
            .arg(format!("--initial-cluster=fencesim={peer}"))
            .arg("--enable-v2=false");
        let client = self.client();
        let program = etcd_binary().display().to_string();
        self.process.spawn(command, &program, || client.ready())
    }

    /// SIGKILL (a crash) and reap.
    pub fn kill(&mut self) {
        self.process.kill();
    }

    /// Starts it again on the same data directory and ports.
    pub fn restart(&mut self) -> Result<(), String> {
        self.kill();
        self.spawn()
    }
}
