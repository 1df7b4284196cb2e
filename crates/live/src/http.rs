//! A minimal blocking HTTP/1.1 client for etcd's JSON gateway: one `POST` per connection
//! (`Connection: close`), JSON in and out, chunked responses decoded, and a streaming reader
//! for the watch.
//!
//! Why not a client crate: etcd 3.4's gateway needs only `POST` with a JSON body on loopback.
//! `etcd-client` needs tonic, prost and `protoc`, and even `ureq` would be a new dependency
//! tree to build on the project's two shared cores; this is ~150 lines of std.

use std::{
    io::{BufRead, BufReader, Read, Write},
    net::{SocketAddr, TcpStream},
    time::Duration,
};

use serde_json::Value;

/// An HTTP failure: connection, timeout, status or body.
#[derive(Debug)]
pub struct HttpError(pub String);

impl std::fmt::Display for HttpError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

fn io(context: &str) -> impl Fn(std::io::Error) -> HttpError + '_ {
    move |error| HttpError(format!("{context}: {error}"))
}

/// Sends `POST path` with `body` and returns the response status and the reader positioned
/// at the start of the (decoded) body.
fn send(
    addr: SocketAddr,
    path: &str,
    body: &Value,
    timeout: Option<Duration>,
) -> Result<(u16, Box<dyn Read + Send>), HttpError> {
    let connect_timeout = timeout.unwrap_or(Duration::from_secs(5));
    let mut stream = TcpStream::connect_timeout(&addr, connect_timeout).map_err(io("connect"))?;
    stream
        .set_read_timeout(timeout)
        .map_err(io("set timeout"))?;
    stream
        .set_write_timeout(Some(connect_timeout))
        .map_err(io("set timeout"))?;
    stream.set_nodelay(true).map_err(io("set nodelay"))?;
    let text = body.to_string();
    let request = format!(
        "POST {path} HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n{text}",
        text.len()
    );
    stream.write_all(request.as_bytes()).map_err(io("send"))?;
    let mut reader = BufReader::new(stream);
    let mut status_line = String::new();
    reader.read_line(&mut status_line).map_err(io("status"))?;
    let status: u16 = status_line
        .split_whitespace()
        .nth(1)
        .and_then(|code| code.parse().ok())
        .ok_or_else(|| HttpError(format!("bad status line {status_line:?}")))?;
    let mut chunked = false;
    let mut length: Option<u64> = None;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).map_err(io("headers"))? == 0 {
            return Err(HttpError("connection closed in the headers".into()));
        }
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        let Some((name, value)) = line.split_once(':') else {
            continue;
        };
        let value = value.trim();
        if name.eq_ignore_ascii_case("transfer-encoding") && value.contains("chunked") {
            chunked = true;
        } else if name.eq_ignore_ascii_case("content-length") {
            length = value.parse().ok();
        }
    }
    let body: Box<dyn Read + Send> = if chunked {
        Box::new(Chunked {
            inner: reader,
            left: 0,
            done: false,
        })
    } else if let Some(length) = length {
        Box::new(reader.take(length))
    } else {
        Box::new(reader)
    };
    Ok((status, body))
}

/// `POST path` with a JSON body; the first JSON value of the response body. A status other
/// than 200 is an error carrying the body (etcd's gateway answers errors as JSON too).
pub fn post(
    addr: SocketAddr,
    path: &str,
    body: &Value,
    timeout: Duration,
) -> Result<Value, HttpError> {
    let (status, reader) = send(addr, path, body, Some(timeout))?;
    let mut values = serde_json::Deserializer::from_reader(reader).into_iter::<Value>();
    let value = match values.next() {
        Some(Ok(value)) => value,
        Some(Err(error)) => return Err(HttpError(format!("{path}: bad JSON body: {error}"))),
        None => Value::Null,
    };
    if status != 200 {
        return Err(HttpError(format!("{path}: HTTP {status}: {value}")));
    }
    Ok(value)
}

/// `POST path` whose response is a stream of JSON values (etcd's watch); `each` is called
/// for every value until it returns false or the stream ends. No read timeout: the caller
/// ends the stream by stopping the server or by dropping the process.
pub fn stream(
    addr: SocketAddr,
    path: &str,
    body: &Value,
    mut each: impl FnMut(Value) -> bool,
) -> Result<(), HttpError> {
    let (status, reader) = send(addr, path, body, None)?;
    if status != 200 {
        return Err(HttpError(format!("{path}: HTTP {status}")));
    }
    for value in serde_json::Deserializer::from_reader(reader).into_iter::<Value>() {
        let value = value.map_err(|error| HttpError(format!("{path}: stream: {error}")))?;
        if !each(value) {
            break;
        }
    }
    Ok(())
}

/// Decodes `Transfer-Encoding: chunked`.
struct Chunked<R> {
    inner: R,
    left: u64,
    done: bool,
}

impl<R: BufRead> Read for Chunked<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.done || buf.is_empty() {
            return Ok(0);
        }
        if self.left == 0 {
            let mut line = String::new();
            // The CRLF ending the previous chunk, then the size line.
            while line.trim().is_empty() {
                line.clear();
                if self.inner.read_line(&mut line)? == 0 {
                    self.done = true;
                    return Ok(0);
                }
            }
            let size = line.trim().split(';').next().unwrap_or("");
            self.left = u64::from_str_radix(size, 16).map_err(|_| {
                std::io::Error::new(
                    std::io::ErrorKind::InvalidData,
                    format!("bad chunk size {line:?}"),
                )
            })?;
            if self.left == 0 {
                self.done = true;
                return Ok(0);
            }
        }
        let want = buf
            .len()
            .min(usize::try_from(self.left).unwrap_or(usize::MAX));
        let read = self.inner.read(&mut buf[..want])?;
        if read == 0 {
            self.done = true;
        }
        self.left -= read as u64;
        Ok(read)
    }
}

/// Standard base64 with padding (etcd's gateway encodes keys and values so).
pub fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for (i, shift) in [18, 12, 6, 0].into_iter().enumerate() {
            if i <= chunk.len() {
                out.push(ALPHABET[((n >> shift) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// Decodes standard base64 (padding optional); `None` on a character outside the alphabet.
pub fn unbase64(text: &str) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(text.len() * 3 / 4);
    let mut acc: u32 = 0;
    let mut bits = 0;
    for c in text.bytes().filter(|&c| c != b'=') {
        let v = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return None,
        };
        acc = (acc << 6) | u32::from(v);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_round_trips_every_length() {
        assert_eq!(base64(b"foo"), "Zm9v");
        assert_eq!(base64(b"fo"), "Zm8=");
        assert_eq!(base64(b"f"), "Zg==");
        assert_eq!(
            base64(b"/fencesim/lock/job-1"),
            "L2ZlbmNlc2ltL2xvY2svam9iLTE="
        );
        for n in 0..20u8 {
            let bytes: Vec<u8> = (0..n).map(|i| i.wrapping_mul(37)).collect();
            assert_eq!(unbase64(&base64(&bytes)).unwrap(), bytes);
        }
        assert_eq!(unbase64("a*b"), None);
    }

    #[test]
    fn chunked_bodies_are_decoded() {
        let raw = b"4\r\n{\"a\"\r\n3\r\n:1}\r\n0\r\n\r\n";
        let mut reader = Chunked {
            inner: &raw[..],
            left: 0,
            done: false,
        };
        let mut out = String::new();
        reader.read_to_string(&mut out).unwrap();
        assert_eq!(out, "{\"a\":1}");
    }
}
