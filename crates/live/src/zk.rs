//! ZooKeeper 3.8 through its own binary protocol (jute over TCP), and the ZooKeeper server
//! process itself (Debian's `zookeeper` package: `ZooKeeperServerMain`, standalone).
//!
//! Only what a Curator-style lock needs: sessions (connect, ping, resume, close), create
//! (ephemeral sequential), get-children, get-data, delete. Why not a client crate: the
//! maintained ones (`zookeeper-client`, `zookeeper-async`) are async on tokio; the worker is
//! blocking threads under a step lock, and the handful of requests is ~200 lines of std.
//! Formats follow `zookeeper.jute` (ConnectRequest/Response, RequestHeader, ReplyHeader,
//! CreateRequest, GetChildrenRequest, Stat).

use std::{
    io::{Read, Write},
    net::{SocketAddr, TcpListener, TcpStream},
    path::{Path, PathBuf},
    process::Command,
    sync::Arc,
    time::Duration,
};

use crate::{guard::Guard, process::ServiceProcess};

/// Operation codes (`ZooDefs.OpCode`).
mod op {
    pub const CREATE: i32 = 1;
    pub const DELETE: i32 = 2;
    pub const GET_DATA: i32 = 4;
    pub const GET_CHILDREN: i32 = 8;
    pub const PING: i32 = 11;
    pub const CLOSE_SESSION: i32 = -11;
}

/// `KeeperException.Code.NONODE`.
pub const NO_NODE: i32 = -101;
/// `KeeperException.Code.NODEEXISTS`.
pub const NODE_EXISTS: i32 = -110;

/// `CreateMode`.
pub const PERSISTENT: i32 = 0;
/// `CreateMode.EPHEMERAL_SEQUENTIAL`.
pub const EPHEMERAL_SEQUENTIAL: i32 = 3;

/// A failure: the connection (or the session) is gone, or a reply was malformed.
#[derive(Debug)]
pub struct ZkError(pub String);

impl std::fmt::Display for ZkError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

fn io(context: &'static str) -> impl Fn(std::io::Error) -> ZkError {
    move |error| ZkError(format!("{context}: {error}"))
}

/// A jute record being written.
#[derive(Default)]
struct Out(Vec<u8>);

impl Out {
    fn int(&mut self, v: i32) -> &mut Self {
        self.0.extend_from_slice(&v.to_be_bytes());
        self
    }
    fn long(&mut self, v: i64) -> &mut Self {
        self.0.extend_from_slice(&v.to_be_bytes());
        self
    }
    fn bool(&mut self, v: bool) -> &mut Self {
        self.0.push(u8::from(v));
        self
    }
    fn buffer(&mut self, v: &[u8]) -> &mut Self {
        self.int(i32::try_from(v.len()).unwrap_or(i32::MAX));
        self.0.extend_from_slice(v);
        self
    }
    fn string(&mut self, v: &str) -> &mut Self {
        self.buffer(v.as_bytes())
    }
}

/// A jute record being read.
struct In<'a>(&'a [u8]);

impl In<'_> {
    fn take(&mut self, n: usize) -> Result<&[u8], ZkError> {
        if self.0.len() < n {
            return Err(ZkError("short reply".into()));
        }
        let (head, tail) = self.0.split_at(n);
        self.0 = tail;
        Ok(head)
    }
    fn int(&mut self) -> Result<i32, ZkError> {
        let bytes = self.take(4)?;
        Ok(i32::from_be_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]))
    }
    fn long(&mut self) -> Result<i64, ZkError> {
        let bytes = self.take(8)?;
        let mut array = [0; 8];
        array.copy_from_slice(bytes);
        Ok(i64::from_be_bytes(array))
    }
    fn buffer(&mut self) -> Result<Vec<u8>, ZkError> {
        let len = self.int()?;
        if len < 0 {
            return Ok(Vec::new());
        }
        Ok(self.take(len as usize)?.to_vec())
    }
    fn string(&mut self) -> Result<String, ZkError> {
        Ok(String::from_utf8_lossy(&self.buffer()?).into_owned())
    }
}

/// The fields of a node's `Stat` that the lock needs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stat {
    /// The zxid of the transaction that created the node.
    pub czxid: i64,
    /// The session owning an ephemeral node (0 for a persistent one).
    pub ephemeral_owner: i64,
}

fn stat(input: &mut In<'_>) -> Result<Stat, ZkError> {
    let czxid = input.long()?;
    let _mzxid = input.long()?;
    let _ctime = input.long()?;
    let _mtime = input.long()?;
    let _version = input.int()?;
    let _cversion = input.int()?;
    let _aversion = input.int()?;
    let ephemeral_owner = input.long()?;
    let _data_length = input.int()?;
    let _num_children = input.int()?;
    let _pzxid = input.long()?;
    Ok(Stat {
        czxid,
        ephemeral_owner,
    })
}

/// One ZooKeeper session over one connection; requests are sent one at a time.
#[derive(Debug)]
pub struct Session {
    addr: SocketAddr,
    stream: TcpStream,
    /// The session id the server assigned.
    pub id: i64,
    password: Vec<u8>,
    /// The negotiated session timeout (ms).
    pub timeout_ms: i32,
    io_timeout: Duration,
    xid: i32,
    last_zxid: i64,
}

fn frame(stream: &mut TcpStream, body: &[u8]) -> Result<(), ZkError> {
    let mut out = Out::default();
    out.buffer(body);
    stream.write_all(&out.0).map_err(io("send"))
}

fn read_frame(stream: &mut TcpStream) -> Result<Vec<u8>, ZkError> {
    let mut len = [0; 4];
    stream.read_exact(&mut len).map_err(io("receive"))?;
    let len = i32::from_be_bytes(len);
    if !(0..=16 << 20).contains(&len) {
        return Err(ZkError(format!("bad frame length {len}")));
    }
    let mut body = vec![0; len as usize];
    stream.read_exact(&mut body).map_err(io("receive"))?;
    Ok(body)
}

/// A connection the server accepted: the stream, the session id, its password and the
/// negotiated timeout.
type Accepted = (TcpStream, i64, Vec<u8>, i32);

/// The connect handshake: `Ok(None)` when the server says the session has expired.
fn handshake(
    addr: SocketAddr,
    timeout_ms: i32,
    id: i64,
    password: &[u8],
    last_zxid: i64,
    io_timeout: Duration,
) -> Result<Option<Accepted>, ZkError> {
    let mut stream = TcpStream::connect_timeout(&addr, io_timeout).map_err(io("connect"))?;
    stream
        .set_read_timeout(Some(io_timeout))
        .map_err(io("set timeout"))?;
    stream
        .set_write_timeout(Some(io_timeout))
        .map_err(io("set timeout"))?;
    stream.set_nodelay(true).map_err(io("set nodelay"))?;
    let mut request = Out::default();
    request
        .int(0)
        .long(last_zxid)
        .int(timeout_ms)
        .long(id)
        .buffer(password)
        .bool(false);
    frame(&mut stream, &request.0)?;
    let reply = read_frame(&mut stream)?;
    let mut input = In(&reply);
    let _protocol = input.int()?;
    let negotiated = input.int()?;
    let session = input.long()?;
    let password = input.buffer()?;
    if negotiated <= 0 {
        return Ok(None);
    }
    Ok(Some((stream, session, password, negotiated)))
}

impl Session {
    /// A new session asking for `timeout_ms` (the server clamps it to [2, 20] × tickTime).
    pub fn connect(
        addr: SocketAddr,
        timeout_ms: u64,
        io_timeout: Duration,
    ) -> Result<Session, ZkError> {
        let timeout = i32::try_from(timeout_ms).unwrap_or(i32::MAX);
        let (stream, id, password, negotiated) =
            handshake(addr, timeout, 0, &[0; 16], 0, io_timeout)?
                .ok_or_else(|| ZkError("a new session was refused".into()))?;
        Ok(Session {
            addr,
            stream,
            id,
            password,
            timeout_ms: negotiated,
            io_timeout,
            xid: 0,
            last_zxid: 0,
        })
    }

    /// Reconnects to this session after its connection broke (as a ZooKeeper client does):
    /// `Ok(false)` when the server says the session has expired.
    pub fn resume(&mut self) -> Result<bool, ZkError> {
        match handshake(
            self.addr,
            self.timeout_ms,
            self.id,
            &self.password,
            self.last_zxid,
            self.io_timeout,
        )? {
            Some((stream, _, _, _)) => {
                self.stream = stream;
                Ok(true)
            }
            None => Ok(false),
        }
    }

    /// Sends one request and returns its reply's error code and body (watch events, xid -1,
    /// are skipped).
    fn call(&mut self, kind: i32, body: &[u8]) -> Result<(i32, i64, Vec<u8>), ZkError> {
        let xid = if kind == op::PING {
            -2
        } else {
            self.xid += 1;
            self.xid
        };
        let mut request = Out::default();
        request.int(xid).int(kind);
        request.0.extend_from_slice(body);
        frame(&mut self.stream, &request.0)?;
        loop {
            let reply = read_frame(&mut self.stream)?;
            let mut input = In(&reply);
            let got = input.int()?;
            let zxid = input.long()?;
            let error = input.int()?;
            if got == -1 {
                continue;
            }
            if got != xid {
                return Err(ZkError(format!("reply to xid {got}, expected {xid}")));
            }
            if zxid > 0 {
                self.last_zxid = zxid;
            }
            return Ok((error, zxid, input.0.to_vec()));
        }
    }

    /// `create` with an open ACL: `Ok(Ok(path))` (with the sequence suffix for a sequential
    /// node) or `Ok(Err(code))`.
    pub fn create(
        &mut self,
        path: &str,
        data: &[u8],
        mode: i32,
    ) -> Result<Result<String, i32>, ZkError> {
        let mut body = Out::default();
        body.string(path).buffer(data);
        // OPEN_ACL_UNSAFE: one ACL, all permissions, world:anyone.
        body.int(1).int(31).string("world").string("anyone");
        body.int(mode);
        let (error, _, reply) = self.call(op::CREATE, &body.0)?;
        if error != 0 {
            return Ok(Err(error));
        }
        Ok(Ok(In(&reply).string()?))
    }

    /// `delete` at any version.
    pub fn delete(&mut self, path: &str) -> Result<Result<(), i32>, ZkError> {
        let mut body = Out::default();
        body.string(path).int(-1);
        let (error, _, _) = self.call(op::DELETE, &body.0)?;
        Ok(if error == 0 { Ok(()) } else { Err(error) })
    }

    /// The children's names, and the zxid the server had reached when it answered.
    pub fn children(&mut self, path: &str) -> Result<Result<(Vec<String>, i64), i32>, ZkError> {
        let mut body = Out::default();
        body.string(path).bool(false);
        let (error, zxid, reply) = self.call(op::GET_CHILDREN, &body.0)?;
        if error != 0 {
            return Ok(Err(error));
        }
        let mut input = In(&reply);
        let count = input.int()?;
        let mut names = Vec::new();
        for _ in 0..count.max(0) {
            names.push(input.string()?);
        }
        Ok(Ok((names, zxid)))
    }

    /// A node's data and stat.
    pub fn get(&mut self, path: &str) -> Result<Result<(Vec<u8>, Stat), i32>, ZkError> {
        let mut body = Out::default();
        body.string(path).bool(false);
        let (error, _, reply) = self.call(op::GET_DATA, &body.0)?;
        if error != 0 {
            return Ok(Err(error));
        }
        let mut input = In(&reply);
        let data = input.buffer()?;
        Ok(Ok((data, stat(&mut input)?)))
    }

    /// A ping: the session's heartbeat, which keeps it (and its ephemeral nodes) alive.
    pub fn ping(&mut self) -> Result<(), ZkError> {
        self.call(op::PING, &[]).map(|_| ())
    }

    /// Closes the session: its ephemeral nodes go at once. Returns the close's zxid.
    pub fn close(&mut self) -> Result<i64, ZkError> {
        let (_, zxid, _) = self.call(op::CLOSE_SESSION, &[])?;
        Ok(zxid)
    }
}

/// Creates `path` and its missing parents as persistent nodes.
pub fn ensure_path(session: &mut Session, path: &str) -> Result<(), ZkError> {
    let mut at = String::new();
    for part in path.split('/').filter(|p| !p.is_empty()) {
        at.push('/');
        at.push_str(part);
        match session.create(&at, &[], PERSISTENT)? {
            Ok(_) | Err(NODE_EXISTS) => {}
            Err(code) => return Err(ZkError(format!("create {at}: error {code}"))),
        }
    }
    Ok(())
}

/// The parent of a scope's lock nodes.
pub fn lock_dir(scope: &str) -> String {
    format!("/fencesim/lock/{scope}")
}

/// The sequence number ZooKeeper appended to a sequential node's name.
pub fn sequence(name: &str) -> Option<u64> {
    let digits = name.get(name.len().checked_sub(10)?..)?;
    digits.parse().ok()
}

/// The ZooKeeper server's classpath: `$FENCESIM_ZOOKEEPER_JAR`, else Debian's.
pub fn zookeeper_jar() -> PathBuf {
    std::env::var_os("FENCESIM_ZOOKEEPER_JAR").map_or_else(
        || PathBuf::from("/usr/share/java/zookeeper.jar"),
        PathBuf::from,
    )
}

/// The ZooKeeper version line, or why it cannot be run.
pub fn zookeeper_version() -> Result<String, String> {
    let jar = zookeeper_jar();
    if !jar.is_file() {
        return Err(format!("no ZooKeeper jar at {}", jar.display()));
    }
    let output = Command::new("java")
        .arg("-cp")
        .arg(&jar)
        .arg("org.apache.zookeeper.Version")
        .output()
        .map_err(|error| format!("cannot run java: {error}"))?;
    let text = String::from_utf8_lossy(&output.stdout);
    let version = text.lines().next().unwrap_or("").to_string();
    let version = version.split('-').next().unwrap_or("").to_string();
    if !output.status.success() || version.is_empty() {
        return Err(format!(
            "java -cp {} org.apache.zookeeper.Version failed",
            jar.display()
        ));
    }
    Ok(format!("ZooKeeper {version}"))
}

/// A standalone ZooKeeper on a loopback port with its own data directory.
#[derive(Debug)]
pub struct Server {
    process: ServiceProcess,
    config: PathBuf,
    port: u16,
}

impl Server {
    /// Starts ZooKeeper (tickTime `tick_ms`) under `dir` and waits until it answers (20 s).
    pub fn start(dir: &Path, tick_ms: u64, guard: Option<Arc<Guard>>) -> Result<Server, String> {
        Server::start_listening(dir, tick_ms, guard, false)
    }

    /// [`Server::start`], listening on 127.0.0.1 or, with `every_loopback_address` (in a
    /// private network namespace only: [`crate::netns`]), on every address.
    pub fn start_listening(
        dir: &Path,
        tick_ms: u64,
        guard: Option<Arc<Guard>>,
        every_loopback_address: bool,
    ) -> Result<Server, String> {
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map_err(|error| format!("no free loopback port: {error}"))?
            .port();
        let data = dir.join("zookeeper-data");
        let config = dir.join("zoo.cfg");
        std::fs::write(
            &config,
            format!(
                "tickTime={tick_ms}\ndataDir={}\nclientPort={port}\nclientPortAddress={}\n\
                 admin.enableServer=false\nmaxClientCnxns=0\n",
                data.display(),
                if every_loopback_address {
                    "0.0.0.0"
                } else {
                    "127.0.0.1"
                }
            ),
        )
        .map_err(|error| format!("{}: {error}", config.display()))?;
        let mut server = Server {
            process: ServiceProcess::new("ZooKeeper", dir.join("zookeeper.log"), guard),
            config,
            port,
        };
        server.spawn()?;
        Ok(server)
    }

    /// The client address.
    pub fn addr(&self) -> SocketAddr {
        SocketAddr::from(([127, 0, 0, 1], self.port))
    }

    fn spawn(&mut self) -> Result<(), String> {
        let mut command = Command::new("java");
        command
            .arg("-cp")
            .arg(zookeeper_jar())
            .arg("org.apache.zookeeper.server.ZooKeeperServerMain")
            .arg(&self.config);
        let addr = self.addr();
        self.process.spawn(command, "ZooKeeper (java)", || {
            Session::connect(addr, 4_000, Duration::from_secs(2))
                .map(|mut session| session.close())
                .is_ok()
        })
    }

    /// SIGKILL (a crash) and reap.
    pub fn kill(&mut self) {
        self.process.kill();
    }

    /// Starts it again on the same data directory and port.
    pub fn restart(&mut self) -> Result<(), String> {
        self.kill();
        self.spawn()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sequence_numbers_are_the_last_ten_digits() {
        assert_eq!(sequence("lock-0000000042"), Some(42));
        assert_eq!(sequence("lock-"), None);
        assert_eq!(sequence("x"), None);
    }
}
