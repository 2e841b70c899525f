//! The HTTP client for the serving endpoints `collect case` and `collect memory` drive
//! (`/health`, `/start_profile`, `/stop_profile`, `/v1/chat/completions`), over `ureq`: plain
//! `http://host:port[/base]`, JSON bodies, any status returned as a response (never an error),
//! chunked or sized bodies, keep-alive, redirects (up to 5), `HTTP_PROXY` / `ALL_PROXY` with
//! `NO_PROXY` from the environment except for loopback hosts (a proxy set for pip must not
//! carry requests to a service on this node), and timeouts on connect and on each read and
//! write. No TLS: these services listen on the node.

use std::time::Duration;

/// A response body larger than this is an error (completions and profiler acks are small).
const MAX_BODY_BYTES: u64 = 64 << 20;

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

/// The host of `http://host[:port][/base]`; any other form is a [`HttpError::Url`].
fn host_of(url: &str) -> Result<&str, HttpError> {
    let rest = url
        .strip_prefix("http://")
        .ok_or_else(|| HttpError::Url(url.into()))?;
    let authority = rest.split('/').next().unwrap_or("");
    let host = match authority.strip_prefix('[') {
        Some(v6) => v6.split(']').next().unwrap_or(""),
        None => authority.split(':').next().unwrap_or(""),
    };
    if host.is_empty() {
        return Err(HttpError::Url(url.into()));
    }
    Ok(host)
}

/// Whether `host` is this machine (no proxy is used for it).
fn is_loopback(host: &str) -> bool {
    host.eq_ignore_ascii_case("localhost")
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

fn agent(host: &str, timeout: Duration) -> ureq::Agent {
    let proxy = if is_loopback(host) {
        None
    } else {
        ureq::Proxy::try_from_env()
    };
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .proxy(proxy)
        .max_redirects(5)
        .timeout_connect(Some(timeout))
        .timeout_per_read(Some(timeout))
        .timeout_per_write(Some(timeout))
        .build()
        .into()
}

/// One request to `base` + `path` with an optional JSON body; `timeout` bounds connect, each
/// read and each write.
pub fn request(
    method: &str,
    base: &str,
    path: &str,
    body: Option<&serde_json::Value>,
    timeout: Duration,
) -> Result<Response, HttpError> {
    let url = format!("{}{path}", base.trim_end_matches('/'));
    let agent = agent(host_of(base)?, timeout);
    let io = |what: String| HttpError::Io {
        url: url.clone(),
        what,
    };
    let req = ureq::http::Request::builder()
        .method(method)
        .uri(&url)
        .header("Accept", "application/json");
    let sent = match body {
        Some(b) => agent.run(
            req.header("Content-Type", "application/json")
                .body(b.to_string())
                .map_err(|e| io(e.to_string()))?,
        ),
        // A GET has no body; a POST without one says `Content-Length: 0` (an empty `()` body
        // would go out chunked, and a server that reads no body then resets the connection).
        None if method.eq_ignore_ascii_case("GET") => {
            agent.run(req.body(()).map_err(|e| io(e.to_string()))?)
        }
        None => agent.run(req.body("").map_err(|e| io(e.to_string()))?),
    };
    let mut resp = sent.map_err(|e| io(e.to_string()))?;
    let status = resp.status().as_u16();
    let bytes = resp
        .body_mut()
        .with_config()
        .limit(MAX_BODY_BYTES)
        .read_to_vec()
        .map_err(|e| io(format!("read: {e}")))?;
    Ok(Response {
        status,
        body: String::from_utf8_lossy(&bytes).into_owned(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{BufRead, BufReader, Read, Write};
    use std::net::TcpListener;

    /// A one-connection server on 127.0.0.1 that records the request and answers `reply`.
    fn serve(reply: &'static [u8]) -> (String, std::thread::JoinHandle<String>) {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", l.local_addr().unwrap());
        let h = std::thread::spawn(move || {
            let (s, _) = l.accept().unwrap();
            let mut r = BufReader::new(s.try_clone().unwrap());
            let mut head = String::new();
            let mut len = 0;
            loop {
                let mut line = String::new();
                r.read_line(&mut line).unwrap();
                if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                    len = v.trim().parse().unwrap();
                }
                head += &line;
                if line == "\r\n" {
                    break;
                }
            }
            let mut body = vec![0; len];
            r.read_exact(&mut body).unwrap();
            (&s).write_all(reply).unwrap();
            head + &String::from_utf8(body).unwrap()
        });
        (url, h)
    }

    #[test]
    fn chunked_reply_and_json_body() {
        let (url, h) = serve(
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n",
        );
        let body = serde_json::json!({"a": 1});
        let r = request(
            "POST",
            &url,
            "/start_profile",
            Some(&body),
            Duration::from_secs(5),
        )
        .unwrap();
        assert_eq!((r.status, r.body.as_str()), (200, "hello world"));
        let seen = h.join().unwrap();
        assert!(
            seen.starts_with("POST /start_profile HTTP/1.1\r\n"),
            "{seen}"
        );
        assert!(
            seen.to_ascii_lowercase()
                .contains("content-type: application/json")
        );
        assert!(seen.ends_with("{\"a\":1}"), "{seen}");
    }

    #[test]
    fn a_post_without_body_sends_content_length_zero() {
        let (url, h) =
            serve(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}");
        let r = request("POST", &url, "/stop_profile", None, Duration::from_secs(5)).unwrap();
        assert_eq!(r.status, 200);
        let seen = h.join().unwrap().to_ascii_lowercase();
        assert!(seen.contains("content-length: 0\r\n"), "{seen}");
        assert!(!seen.contains("transfer-encoding"), "{seen}");
        assert!(seen.ends_with("\r\n\r\n"), "nothing after the head: {seen}");
    }

    #[test]
    fn an_error_status_is_a_response_and_a_dead_port_an_error() {
        let (url, h) = serve(b"HTTP/1.1 503 Service Unavailable\r\nContent-Length: 4\r\n\r\nbusy");
        let r = request("GET", &url, "/health", None, Duration::from_secs(5)).unwrap();
        assert_eq!((r.status, r.body.as_str(), r.ok()), (503, "busy", false));
        h.join().unwrap();
        let dead = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", dead.local_addr().unwrap());
        drop(dead);
        let e = request("GET", &url, "/health", None, Duration::from_secs(2)).unwrap_err();
        assert!(matches!(e, HttpError::Io { .. }), "{e}");
        assert!(matches!(
            request("GET", "https://x:1", "/", None, Duration::from_secs(1)),
            Err(HttpError::Url(_))
        ));
        assert!(matches!(
            request("GET", "http://", "/", None, Duration::from_secs(1)),
            Err(HttpError::Url(_))
        ));
    }

    #[test]
    fn loopback_hosts() {
        for h in ["localhost", "127.0.0.1", "::1", "127.1.2.3"] {
            assert!(is_loopback(h), "{h}");
        }
        for h in ["10.0.0.5", "node3", "::2"] {
            assert!(!is_loopback(h), "{h}");
        }
        assert_eq!(host_of("http://[::1]:8000/v1").unwrap(), "::1");
        assert_eq!(host_of("http://node3:8000").unwrap(), "node3");
    }
}
