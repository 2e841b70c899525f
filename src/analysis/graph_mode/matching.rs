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
pub fn by_connection(
    q: &Sequence,
    caps: &[Recorded],
    index: &ConnIndex,
    file: &str,
) -> Option<SeqMatch> {
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
/// carry one); then the captures that fit best: every capture whose launches agree with the
/// sequence position by position, else the best alignments among the [`MAX_TRIES`] captures
/// nearest in length (most pairs, then fewest launches left over), taken at
/// [`MIN_CAPTURE_AGREEMENT_PCT`]. When several captures fit equally (one graph per batch size,
/// or graphs told apart by kind only), a position keeps an op only when all of them record the
/// same one there ([`consensus`]).
pub fn to_capture(q: &Sequence, cands: &[Candidate<'_>]) -> SeqMatch {
    let n = q.tokens.len();
    let by_graph = q.graph >= 0 && cands.iter().any(|c| c.rec.graph == q.graph);
    let mut pool: Vec<&Candidate> = cands
        .iter()
        .filter(|c| !by_graph || c.rec.graph == q.graph)
        .collect();
    let before =
        |c: &Candidate| c.own && q.first_launch_ns >= 0 && c.rec.start_ns <= q.first_launch_ns;
    pool.sort_by_key(|c| (!before(c), !c.own, std::cmp::Reverse(c.rec.start_ns)));
    let exact: Vec<(&Candidate, Vec<(u32, u32)>)> = pool
        .iter()
        .filter(|c| {
            c.rec.tokens.len() == n
                && q.tokens
                    .iter()
                    .zip(&c.rec.tokens)
                    .all(|(a, b)| a.agrees(*b))
        })
        .map(|&c| (c, (0..n as u32).map(|k| (k, k)).collect()))
        .collect();
    if !exact.is_empty() {
        return consensus(q, &exact, Source::Capture);
    }
    // Nearest first: the longest agreeing prefix plus suffix (a capture of this graph with a
    // launch or two more agrees at both ends), then the length difference.
    let mut near: Vec<(usize, &&Candidate)> = pool
        .iter()
        .map(|c| (ends(&q.tokens, &c.rec.tokens), c))
        .collect();
    near.sort_by_key(|(e, c)| (std::cmp::Reverse(*e), c.rec.tokens.len().abs_diff(n)));
    let near = near.into_iter().map(|x| x.1);
    let mut fits: Vec<(&Candidate, Vec<(u32, u32)>)> = Vec::new();
    for c in near.into_iter().take(MAX_TRIES) {
        let m = c.rec.tokens.len();
        let d = budget(n, m);
        if m.abs_diff(n) > d {
            continue;
        }
        if let Some(pairs) = align(n, m, d, |i, j| q.tokens[i].agrees(c.rec.tokens[j])) {
            fits.push((c, repair(&q.tokens, &c.rec.tokens, pairs)));
        }
    }
    // Most pairs, then fewest recorded launches left over.
    let score =
        |f: &(&Candidate, Vec<(u32, u32)>)| (f.1.len(), std::cmp::Reverse(f.0.rec.tokens.len()));
    let Some(top) = fits.iter().map(score).max() else {
        return unmatched(if pool.is_empty() {
            String::new()
        } else {
            format!(
                "no capture aligns with its {n} device events (nearest: {} launches)",
                pool.iter()
                    .map(|c| c.rec.tokens.len())
                    .min_by_key(|m| m.abs_diff(n))
                    .unwrap_or(0)
            )
        });
    };
    fits.retain(|f| score(f) == top);
    let share = agreement(top.0, n);
    if share < MIN_CAPTURE_AGREEMENT_PCT {
        return unmatched(format!(
            "the nearest capture ({} launches, {}) pairs with {share:.1}% of the {n} device events, below {MIN_CAPTURE_AGREEMENT_PCT}%: not attributed",
            fits[0].0.rec.tokens.len(),
            fits[0].0.file,
        ));
    }
    consensus(q, &fits, Source::Capture)
}

/// How far from its expected place a device event left out by the alignment may find its
/// recorded launch (by kernel name) when streams ran it out of the recorded order.
const REORDER_WINDOW: usize = 8;

/// The alignment's pairs plus pairs for the device events it left out whose recorded launch is
/// near where it is expected (the last pair before it, shifted by the distance) and names the
/// same kernel: a graph's branches on several streams start in another order than they were
/// recorded (an event wait on the compute stream before the collective's second task). Kind
/// alone never pairs out of order.
fn repair(q: &[Token], rec: &[Token], mut pairs: Vec<(u32, u32)>) -> Vec<(u32, u32)> {
    if pairs.len() == q.len() || pairs.len() == rec.len() {
        return pairs;
    }
    let mut used = vec![false; rec.len()];
    let mut at = vec![None; q.len()];
    for &(i, j) in &pairs {
        used[j as usize] = true;
        at[i as usize] = Some(j as usize);
    }
    let mut last: Option<(usize, usize)> = None;
    for i in 0..q.len() {
        if let Some(j) = at[i] {
            last = Some((i, j));
            continue;
        }
        if q[i].name == super::extract::NO_NAME {
            continue;
        }
        let expect = last.map_or(i, |(pi, pj)| pj + (i - pi));
        let lo = expect.saturating_sub(REORDER_WINDOW);
        let hi = (expect + REORDER_WINDOW).min(rec.len().saturating_sub(1));
        let best = (lo..=hi.max(lo))
            .filter(|&j| {
                j < rec.len() && !used[j] && q[i].named_with(rec[j]) && q[i].agrees(rec[j])
            })
            .min_by_key(|&j| j.abs_diff(expect));
        if let Some(j) = best {
            used[j] = true;
            pairs.push((i as u32, j as u32));
        }
    }
    pairs.sort_unstable();
    pairs
}

/// The agreeing prefix plus the agreeing suffix of `a` and `b`, at most the shorter length.
fn ends(a: &[Token], b: &[Token]) -> usize {
    let pre = a.iter().zip(b).take_while(|(x, y)| x.agrees(**y)).count();
    let suf = a
        .iter()
        .rev()
        .zip(b.iter().rev())
        .take_while(|(x, y)| x.agrees(**y))
        .count();
    (pre + suf).min(a.len().min(b.len()))
}

/// The match from the captures that fit `q` equally well (the first is the preferred one): a
/// position keeps the op all of them record for it, and the `nn.Module` / Python frame when
/// they agree on those too; positions where they record different ops are left unattributed
/// and counted in the note.
fn consensus(q: &Sequence, fits: &[(&Candidate, Vec<(u32, u32)>)], source: Source) -> SeqMatch {
    let (first, pairs) = &fits[0];
    let mut m = found(q, first, pairs, source);
    if fits.len() == 1 {
        return m;
    }
    let mut disputed = 0u64;
    for (c, pairs) in &fits[1..] {
        let mut at = vec![None; q.tokens.len()];
        for &(i, j) in pairs {
            at[i as usize] = Some(c.rec.labels[j as usize]);
        }
        for (mine, theirs) in m.labels.iter_mut().zip(at) {
            let Some(l) = mine.as_mut() else { continue };
            match theirs {
                Some(o) if o.op == l.op => {
                    if o.module != l.module {
                        l.module = super::extract::NO_NAME;
                    }
                    if o.frame != l.frame {
                        l.frame = super::extract::NO_NAME;
                    }
                }
                _ => {
                    *mine = None;
                    disputed += 1;
                }
            }
        }
    }
    if disputed > 0 {
        m.matched -= disputed;
        m.named = pairs
            .iter()
            .filter(|&&(i, j)| {
                m.labels[i as usize].is_some()
                    && q.tokens[i as usize].named_with(first.rec.tokens[j as usize])
            })
            .count() as u64;
        let note = format!(
            "{} {} fit it equally well and record different ops at {disputed} of its {} positions: those are not attributed",
            fits.len(),
            if source == Source::EagerMap {
                "places of the eager steps"
            } else {
                "captures"
            },
            q.tokens.len()
        );
        m.note = if m.note.is_empty() {
            note
        } else {
            format!("{}; {note}", m.note)
        };
    }
    m
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
        note = format!(
            "{} of {n} device events pair with no recorded launch",
            n as u64 - matched
        );
    }
    if source == Source::Capture && m > matched as usize {
        let extra = m - matched as usize;
        if !note.is_empty() {
            note += "; ";
        }
        note += &format!(
            "{extra} recorded launch(es) ran no device event here (memsets, host nodes, empty kernels)"
        );
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
    // Every anchor's alignment, in step coordinates.
    let mut fits: Vec<(&Candidate, Vec<(u32, u32)>)> = Vec::new();
    let mut tries = 0;
    'steps: for c in steps {
        let e = &c.rec.tokens;
        for p in anchors(&q.tokens, e) {
            let d = budget(n, n);
            let w = &e[p..e.len().min(p + n + d)];
            let named =
                |i: usize, j: usize| q.tokens[i].named_with(w[j]) && q.tokens[i].agrees(w[j]);
            tries += 1;
            if let Some(pairs) = align(n, w.len(), d + w.len().saturating_sub(n), named) {
                let shifted = pairs.iter().map(|&(i, j)| (i, j + p as u32)).collect();
                fits.push((c, repair(&q.tokens, e, shifted)));
            }
            if tries >= MAX_TRIES * MAX_ANCHORS {
                break 'steps;
            }
        }
    }
    let Some(top) = fits.iter().map(|f| f.1.len()).max() else {
        return unmatched(format!(
            "no eager step holds its {n} kernels in order: not mapped"
        ));
    };
    let share = agreement(top, n);
    if share < MIN_EAGER_AGREEMENT_PCT {
        return unmatched(format!(
            "the eager run's best step agrees on {share:.1}% of its {n} kernels, below {MIN_EAGER_AGREEMENT_PCT}%: the sequences disagree, not mapped"
        ));
    }
    // Every place of the eager steps where the sequence fits equally well: a short sequence
    // may occur several times, launched by different ops.
    fits.retain(|f| f.1.len() == top);
    consensus(q, &fits, Source::EagerMap)
}
