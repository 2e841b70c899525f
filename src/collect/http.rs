//! A minimal HTTP/1.1 client for the serving endpoints `collect case` drives (`/health`,
//! `/start_profile`, `/stop_profile`, `/v1/chat/completions`): plain `http://host:port`, one
//! request per connection (`Connection: close`), JSON bodies, Content-Length or chunked
//! responses, connect / read / write timeouts. No TLS: these services listen on the node.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::time::Duration;

#[derive(Debug, Clone)]
pub struct Response {
    pub status: u16,
    pub body: String,
}

impl Response {
    pub fn ok(&self) -> bool {
        (200..300).contains(&self.status)
    }
}

#[derive(Debug, thiserror::Error)]
pub enum HttpError {
    #[error("bad URL `{0}` (expected http://host:port[/path])")]
    Url(String),
    #[error("{url}: {what}")]
    Io { url: String, what: String },
}

/// `http://host:port/base` → (host:port, base path without a trailing slash).
fn split(url: &str) -> Result<(String, String), HttpError> {
    let rest = url
        .strip_prefix("http://")
        .ok_or_else(|| HttpError::Url(url.into()))?;
    let (host, path) = match rest.find('/') {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, ""),
    };
    if host.is_empty() {
        return Err(HttpError::Url(url.into()));
    }
    let host = if host.contains(':') {
        host.to_string()
    } else {
        format!("{host}:80")
    };
    Ok((host, path.trim_end_matches('/').to_string()))
}

/// One request to `base` + `path`; `timeout` bounds connect, each read and each write.
pub fn request(
    method: &str,
    base: &str,
    path: &str,
    body: Option<&serde_json::Value>,
    timeout: Duration,
) -> Result<Response, HttpError> {
    let url = format!("{}{path}", base.trim_end_matches('/'));
    let io = |what: String| HttpError::Io {
        url: url.clone(),
        what,
    };
    let (host, prefix) = split(base)?;
    let addr = host
        .to_socket_addrs()
        .map_err(|e| io(e.to_string()))?
        .next()
        .ok_or_else(|| io("no address".into()))?;
    let mut s =
        TcpStream::connect_timeout(&addr, timeout).map_err(|e| io(format!("connect: {e}")))?;
    s.set_read_timeout(Some(timeout))
        .map_err(|e| io(e.to_string()))?;
    s.set_write_timeout(Some(timeout))
        .map_err(|e| io(e.to_string()))?;
    let payload = body.map(|b| b.to_string()).unwrap_or_default();
    let mut req = format!(
        "{method} {prefix}{path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\nAccept: application/json\r\n"
    );
    if body.is_some() {
        req += &format!(
            "Content-Type: application/json\r\nContent-Length: {}\r\n",
            payload.len()
        );
    } else if method != "GET" {
        req += "Content-Length: 0\r\n";
    }
    req += "\r\n";
    req += &payload;
    s.write_all(req.as_bytes())
        .map_err(|e| io(format!("send: {e}")))?;
    let mut r = BufReader::new(s);
    let mut line = String::new();
    r.read_line(&mut line)
        .map_err(|e| io(format!("read: {e}")))?;
    let status: u16 = line
        .split_whitespace()
        .nth(1)
        .and_then(|x| x.parse().ok())
        .ok_or_else(|| io(format!("not an HTTP response: {:?}", line.trim_end())))?;
    let (mut len, mut chunked) = (None, false);
    loop {
        line.clear();
        r.read_line(&mut line)
            .map_err(|e| io(format!("read: {e}")))?;
        let h = line.trim_end();
        if h.is_empty() {
            break;
        }
        if let Some((k, v)) = h.split_once(':') {
            let k = k.trim().to_ascii_lowercase();
            if k == "content-length" {
                len = v.trim().parse::<usize>().ok();
            } else if k == "transfer-encoding" && v.to_ascii_lowercase().contains("chunked") {
                chunked = true;
            }
        }
    }
    let mut body = Vec::new();
    if chunked {
        loop {
            line.clear();
            r.read_line(&mut line)
                .map_err(|e| io(format!("read: {e}")))?;
            let n = usize::from_str_radix(line.trim().split(';').next().unwrap_or(""), 16)
                .map_err(|_| io("bad chunk size".into()))?;
            if n == 0 {
                break;
            }
            let mut chunk = vec![0; n + 2];
            r.read_exact(&mut chunk)
                .map_err(|e| io(format!("read: {e}")))?;
            body.extend_from_slice(&chunk[..n]);
        }
    } else if let Some(n) = len {
        body.resize(n, 0);
        r.read_exact(&mut body)
            .map_err(|e| io(format!("read: {e}")))?;
    } else {
        r.read_to_end(&mut body)
            .map_err(|e| io(format!("read: {e}")))?;
    }
    Ok(Response {
        status,
        body: String::from_utf8_lossy(&body).into_owned(),
    })
}
