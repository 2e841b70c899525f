//! A larger Kineto trace made of a real one: the events of `traceEvents` (metadata events once)
//! written `copies` times, each copy shifted past the end of the one before (timestamps by the
//! trace's span, in whole µs, fractions kept as written) and its ids (flow `id`, `correlation`,
//! `External id`, `Record function id`, `Ev Idx`) by one offset past their largest value, so
//! every copy's flows, correlations and nesting stay its own. The text of each event is copied
//! as written (key order, number formats); only those values change. The bench's Kineto
//! reference (docs/performance.md "kineto246") is the shared mtia_rank_0.json.gz, 5 copies.

/// Keys whose integer values are ids.
const ID_KEYS: [&str; 5] = [
    "\"id\": ",
    "\"correlation\": ",
    "\"External id\": ",
    "\"Record function id\": ",
    "\"Ev Idx\": ",
];

/// The byte ranges of the top-level objects of the JSON array that opens at `open` (its `[`),
/// and the position just past its `]`.
fn objects(b: &[u8], open: usize) -> (Vec<(usize, usize)>, usize) {
    let (mut depth, mut in_str, mut esc, mut start) = (0usize, false, false, 0usize);
    let mut out = Vec::new();
    for (i, &c) in b.iter().enumerate().skip(open + 1) {
        if in_str {
            match (esc, c) {
                (true, _) => esc = false,
                (false, b'\\') => esc = true,
                (false, b'"') => in_str = false,
                _ => {}
            }
            continue;
        }
        match c {
            b'"' => in_str = true,
            b'{' | b'[' => {
                if depth == 0 {
                    start = i;
                }
                depth += 1;
            }
            b'}' | b']' if depth == 0 => return (out, i + 1),
            b'}' | b']' => {
                depth -= 1;
                if depth == 0 {
                    out.push((start, i + 1));
                }
            }
            _ => {}
        }
    }
    panic!("traceEvents is not closed");
}

/// The number after each `key` in `ev`: (start, end) of its text.
fn numbers<'a>(ev: &'a str, key: &'a str) -> impl Iterator<Item = (usize, usize)> + 'a {
    ev.match_indices(key).filter_map(move |(at, k)| {
        let s = at + k.len();
        let len = ev[s..]
            .bytes()
            .take_while(|c| c.is_ascii_digit() || matches!(c, b'.' | b'-' | b'e' | b'E' | b'+'))
            .count();
        (len > 0).then_some((s, s + len))
    })
}

/// `n` (an integer, or digits with a fraction) plus `add`, the fraction kept as written.
fn shifted(n: &str, add: i64) -> Option<String> {
    let (int, frac) = n.split_once('.').map_or((n, None), |(a, b)| (a, Some(b)));
    let v: i64 = int.parse().ok()?;
    Some(match frac {
        Some(f) if f.bytes().all(|c| c.is_ascii_digit()) => format!("{}.{f}", v + add),
        Some(_) => return None,
        None => (v + add).to_string(),
    })
}

/// A metadata event (`"ph": "M"`), written once.
fn is_meta(ev: &str) -> bool {
    ev.contains("\"ph\": \"M\"")
}

/// `ev` with its timestamp moved by `dt` µs and its ids by `did`.
fn copy_of(ev: &str, dt: i64, did: i64) -> String {
    let mut edits: Vec<(usize, usize, String)> = Vec::new();
    for (s, e) in numbers(ev, "\"ts\": ") {
        if let Some(v) = shifted(&ev[s..e], dt) {
            edits.push((s, e, v));
        }
    }
    for key in ID_KEYS {
        for (s, e) in numbers(ev, key) {
            if let Some(v) = ev[s..e].parse::<i64>().ok().map(|v| (v + did).to_string()) {
                edits.push((s, e, v));
            }
        }
    }
    edits.sort_by_key(|x| x.0);
    let mut out = String::with_capacity(ev.len() + 16);
    let mut at = 0;
    for (s, e, v) in edits {
        out.push_str(&ev[at..s]);
        out.push_str(&v);
        at = e;
    }
    out.push_str(&ev[at..]);
    out
}

/// The trace `text` with its non-metadata events written `copies` times.
pub fn replicate(text: &str, copies: usize) -> String {
    let open = text.find("\"traceEvents\"").expect("traceEvents") + "\"traceEvents\"".len();
    let open = open + text[open..].find('[').expect("traceEvents array");
    let (evs, close) = objects(text.as_bytes(), open);
    let (mut lo, mut hi, mut max_id) = (f64::MAX, f64::MIN, 0i64);
    for &(s, e) in &evs {
        let ev = &text[s..e];
        let num = |k| {
            numbers(ev, k)
                .next()
                .and_then(|(a, b)| ev[a..b].parse::<f64>().ok())
        };
        // Metadata events (written once, often at ts 0) do not widen the span.
        if let Some(ts) = num("\"ts\": ").filter(|_| !is_meta(ev)) {
            lo = lo.min(ts);
            hi = hi.max(ts + num("\"dur\": ").unwrap_or(0.0));
        }
        for key in ID_KEYS {
            for (a, b) in numbers(ev, key) {
                max_id = max_id.max(ev[a..b].parse().unwrap_or(0));
            }
        }
    }
    let dt = (hi - lo).ceil() as i64 + 1000;
    let did = max_id + 1;
    let mut out = String::with_capacity(text.len() * copies);
    out.push_str(&text[..=open]);
    let mut first = true;
    for c in 0..copies as i64 {
        for &(s, e) in &evs {
            let ev = &text[s..e];
            if is_meta(ev) && c > 0 {
                continue;
            }
            out.push_str(if first { "\n  " } else { ",\n  " });
            first = false;
            if c == 0 {
                out.push_str(ev);
            } else {
                out.push_str(&copy_of(ev, c * dt, c * did));
            }
        }
    }
    out.push('\n');
    out.push_str(&text[close - 1..]);
    out
}
