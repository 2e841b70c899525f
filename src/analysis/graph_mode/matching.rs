//! Matching a replayed sequence of device events to the launches that recorded it: by connection
//! id (Ascend, exact, when the capture was profiled in the same session), else by aligning the
//! sequence to a capture window's launches (graph identity first, when both sides carry one),
//! else to an eager step of the same workload. Only agreeing pairs carry an op; a match below
//! its agreement threshold carries none and says why.

use super::align::align;
use super::extract::{Label, Recorded, SeqMatch, Sequence, Source, Token};
use crate::model::hash::FxHashMap;

/// A capture matches when at least this share of the sequence's device events pair with its
/// launches (a capture of another graph agrees far less when kernel names are known).
pub const MIN_CAPTURE_AGREEMENT_PCT: f64 = 80.0;
/// An eager step maps a sequence only when at least this share pairs by kernel name: below, the
/// sequences disagree and nothing is mapped (never a guess).
pub const MIN_EAGER_AGREEMENT_PCT: f64 = 90.0;
/// Captures (or eager anchors) aligned per sequence at most, nearest in length first.
const MAX_TRIES: usize = 8;
/// Eager anchors tried per step.
const MAX_ANCHORS: usize = 16;

/// The edit budget of one alignment: a tenth of the longer side, at least 16, at most 2,048.
fn budget(n: usize, m: usize) -> usize {
    (n.max(m) / 10).clamp(16, 2048)
}

/// Recorded launches that may hold a sequence's ops, and the file they are in.
pub struct Candidate<'a> {
    pub rec: &'a Recorded,
    pub file: &'a str,
    /// In the sequence's own file (its clock: a window that began before the first launch is
    /// the one that recorded it).
    pub own: bool,
}

/// Ascend: captured launch by connection id (capture index, position).
pub type ConnIndex = FxHashMap<i64, (u32, u32)>;

pub fn conn_index(caps: &[Recorded]) -> ConnIndex {
    let mut m = ConnIndex::default();
    for (c, r) in caps.iter().enumerate() {
        for (k, &id) in r.conns.iter().enumerate() {
            if id >= 0 {
                m.insert(id, (c as u32, k as u32));
            }
        }
    }
    m
}

/// Ascend: every position whose task keeps the connection id of a captured launch takes that
/// launch's ops; None when no position does.
pub fn by_connection(q: &Sequence, caps: &[Recorded], index: &ConnIndex, file: &str) -> Option<SeqMatch> {
    let mut labels = vec![None; q.tokens.len()];
    let mut hits: FxHashMap<u32, u64> = FxHashMap::default();
    for (k, c) in q.conns.iter().enumerate() {
        if let Some(&(cap, pos)) = index.get(c) {
            labels[k] = Some(caps[cap as usize].labels[pos as usize]);
            *hits.entry(cap).or_default() += 1;
        }
    }
    let matched: u64 = hits.values().sum();
    let (&cap, _) = hits.iter().max_by_key(|x| (x.1, std::cmp::Reverse(*x.0)))?;
    let rec = &caps[cap as usize];
    Some(SeqMatch {
        source: Source::ConnectionId,
        from: file.to_string(),
        recorded_at_ns: rec.start_ns,
        recorded_launches: rec.tokens.len() as u64,
        labels,
        matched,
        named: 0,
        note: String::new(),
    })
}

fn agreement(matched: usize, n: usize) -> f64 {
    matched as f64 * 100.0 / n.max(1) as f64
}

/// The pairs' labels, matched and named counts.
fn paired(q: &Sequence, rec: &Recorded, pairs: &[(u32, u32)]) -> (Vec<Option<Label>>, u64, u64) {
    let mut labels = vec![None; q.tokens.len()];
    let mut named = 0;
    for &(i, j) in pairs {
        labels[i as usize] = Some(rec.labels[j as usize]);
        named += q.tokens[i as usize].named_with(rec.tokens[j as usize]) as u64;
    }
    (labels, pairs.len() as u64, named)
}

/// The capture of `q` among `cands`: graph identity first (when the sequence and some capture
/// carry one), then an exact positional match (own-file windows that began before the
/// sequence's first launch, latest first, then the others latest first), then the best
/// alignment among the captures nearest in length, taken at [`MIN_CAPTURE_AGREEMENT_PCT`].
pub fn to_capture(q: &Sequence, cands: &[Candidate<'_>]) -> SeqMatch {
    let n = q.tokens.len();
    let by_graph = q.graph >= 0 && cands.iter().any(|c| c.rec.graph == q.graph);
    let mut pool: Vec<&Candidate> = cands
        .iter()
        .filter(|c| !by_graph || c.rec.graph == q.graph)
        .collect();
    let before = |c: &Candidate| c.own && q.first_launch_ns >= 0 && c.rec.start_ns <= q.first_launch_ns;
    pool.sort_by_key(|c| (!before(c), !c.own, std::cmp::Reverse(c.rec.start_ns)));
    let exact = pool.iter().find(|c| {
        c.rec.tokens.len() == n && q.tokens.iter().zip(&c.rec.tokens).all(|(a, b)| a.agrees(*b))
    });
    if let Some(c) = exact {
        let pairs: Vec<(u32, u32)> = (0..n as u32).map(|k| (k, k)).collect();
        return found(q, c, &pairs, Source::Capture);
    }
    let mut near: Vec<&&Candidate> = pool.iter().collect();
    near.sort_by_key(|c| c.rec.tokens.len().abs_diff(n));
    let mut best: Option<(&Candidate, Vec<(u32, u32)>)> = None;
    for c in near.into_iter().take(MAX_TRIES) {
        let m = c.rec.tokens.len();
        let d = budget(n, m);
        if m.abs_diff(n) > d {
            continue;
        }
        let Some(pairs) = align(n, m, d, |i, j| q.tokens[i].agrees(c.rec.tokens[j])) else {
            continue;
        };
        if best.as_ref().is_none_or(|b| pairs.len() > b.1.len()) {
            best = Some((c, pairs));
        }
    }
    match best {
        Some((c, pairs)) if agreement(pairs.len(), n) >= MIN_CAPTURE_AGREEMENT_PCT => {
            found(q, c, &pairs, Source::Capture)
        }
        Some((c, pairs)) => unmatched(format!(
            "the nearest capture ({} launches, {}) pairs with {:.1}% of the {n} device events, below {MIN_CAPTURE_AGREEMENT_PCT}%: not attributed",
            c.rec.tokens.len(),
            c.file,
            agreement(pairs.len(), n)
        )),
        None if pool.is_empty() => unmatched(String::new()),
        None => unmatched(format!(
            "no capture aligns with its {n} device events (nearest: {} launches)",
            pool.iter()
                .map(|c| c.rec.tokens.len())
                .min_by_key(|m| m.abs_diff(n))
                .unwrap_or(0)
        )),
    }
}

fn unmatched(note: String) -> SeqMatch {
    SeqMatch {
        note,
        ..SeqMatch::default()
    }
}

fn found(q: &Sequence, c: &Candidate, pairs: &[(u32, u32)], source: Source) -> SeqMatch {
    let (labels, matched, named) = paired(q, c.rec, pairs);
    let (n, m) = (q.tokens.len(), c.rec.tokens.len());
    let mut note = String::new();
    if matched < n as u64 {
        note = format!("{} of {n} device events pair with no recorded launch", n as u64 - matched);
    }
    if source == Source::Capture && m > matched as usize {
        let extra = m - matched as usize;
        if !note.is_empty() {
            note += "; ";
        }
        note += &format!("{extra} recorded launch(es) ran no device event here (memsets, host nodes, empty kernels)");
        if named < matched {
            note += ": the capture's launches name no kernel (CUDA runtime calls), so where they sit is known by kind only, and events near them may carry a neighbouring launch's op";
        }
    }
    SeqMatch {
        source,
        from: c.file.to_string(),
        recorded_at_ns: c.rec.start_ns,
        recorded_launches: m as u64,
        labels,
        matched,
        named,
        note,
    }
}

/// Positions `p` of `e` where the first (or last) `k` tokens of `q` begin (end) to agree.
fn anchors(q: &[Token], e: &[Token]) -> Vec<usize> {
    let n = q.len();
    let k = n.min(4);
    let at = |p: usize, from: usize| (0..k).all(|j| q[from + j].agrees(e[p + j]));
    let mut v: Vec<usize> = (0..=e.len().saturating_sub(k))
        .filter(|&p| p + k <= e.len() && at(p, 0))
        .take(MAX_ANCHORS)
        .collect();
    if v.is_empty() {
        v = (0..=e.len().saturating_sub(k))
            .filter(|&p| p + k <= e.len() && at(p, n - k))
            .map(|p| (p + k).saturating_sub(n))
            .take(MAX_ANCHORS)
            .collect();
    }
    v
}

/// The eager step window that maps `q` best: the sequence aligned (by kernel name) at each
/// anchor of each step, taken at [`MIN_EAGER_AGREEMENT_PCT`]; else no ops, with the best share.
pub fn to_eager(q: &Sequence, steps: &[Candidate<'_>]) -> SeqMatch {
    let n = q.tokens.len();
    if n == 0 {
        return unmatched(String::new());
    }
    let mut best: Option<(&Candidate, usize, Vec<(u32, u32)>)> = None;
    let mut tries = 0;
    for c in steps {
        let e = &c.rec.tokens;
        for p in anchors(&q.tokens, e) {
            let d = budget(n, n);
            let w = &e[p..e.len().min(p + n + d)];
            let named = |i: usize, j: usize| {
                q.tokens[i].named_with(w[j]) && q.tokens[i].agrees(w[j])
            };
            tries += 1;
            if let Some(pairs) = align(n, w.len(), d + w.len().saturating_sub(n), named)
                && best.as_ref().is_none_or(|b| pairs.len() > b.2.len())
            {
                best = Some((c, p, pairs));
            }
            if tries >= MAX_TRIES * MAX_ANCHORS {
                break;
            }
        }
    }
    let Some((c, p, pairs)) = best else {
        return unmatched(format!(
            "no eager step holds its {n} kernels in order: not mapped"
        ));
    };
    let share = agreement(pairs.len(), n);
    if share < MIN_EAGER_AGREEMENT_PCT {
        return unmatched(format!(
            "the eager run's best step agrees on {share:.1}% of its {n} kernels, below {MIN_EAGER_AGREEMENT_PCT}%: the sequences disagree, not mapped"
        ));
    }
    let shifted: Vec<(u32, u32)> = pairs.iter().map(|&(i, j)| (i, j + p as u32)).collect();
    let mut m = found(q, c, &shifted, Source::EagerMap);
    m.recorded_launches = n as u64;
    m
}
