//! The ops inside replays from the matched sequences: device time per op (the op around each
//! matched event's recorded launch, else the event's kernel name), per `nn.Module` and Python
//! frame, per kernel family, the matched share, and each sequence's ops in order.

use super::extract::{Label, NO_NAME, SeqMatch, Sequence, Source, Strings};
use super::{GraphSequence, OpSpan, OpsInGraphs};
use crate::analysis::families::family_of;
use crate::analysis::stats::{DurStats, dur_stats_of};
use crate::model::hash::FxHashMap;

/// The positions a group's durations sit at: (sequence, position in it).
type Columns = Vec<(u32, u32)>;

/// Rows of `by` (name → the positions of its durations), top `top_n` by time, the rest summed:
/// (rows, other).
fn ranked(
    by: FxHashMap<&str, Columns>,
    seqs: &[Sequence],
    denom: i64,
    top_n: usize,
) -> (Vec<DurStats>, Vec<DurStats>) {
    top(stats_of(by, seqs, denom), top_n)
}

/// The statistics of each group of `by`, unordered. One buffer is reused across groups: no
/// group's durations are copied twice.
fn stats_of(by: FxHashMap<&str, Columns>, seqs: &[Sequence], denom: i64) -> Vec<DurStats> {
    let mut buf: Vec<i64> = Vec::new();
    by.into_iter()
        .map(|(n, cols)| {
            buf.clear();
            for &(q, k) in &cols {
                buf.extend(column(&seqs[q as usize], k as usize));
            }
            dur_stats_of(n.to_string(), &mut buf, denom)
        })
        .collect()
}

/// `rows` by time (then name), split after the first `top_n`.
fn top(mut rows: Vec<DurStats>, top_n: usize) -> (Vec<DurStats>, Vec<DurStats>) {
    rows.sort_by(|a, b| b.sum_ns.cmp(&a.sum_ns).then_with(|| a.name.cmp(&b.name)));
    let rest = rows.split_off(top_n.min(rows.len()));
    (rows, rest)
}

/// The durations of position `k` of `q`, one per replay.
fn column(q: &Sequence, k: usize) -> impl Iterator<Item = i64> + '_ {
    q.durs
        .iter()
        .skip(k)
        .step_by(q.tokens.len().max(1))
        .copied()
}

/// Each position's duration summed over the replays, [`column`] by [`column`], read in the
/// order the durations are stored (a replay after another) rather than down each column.
fn position_sums(q: &Sequence) -> Vec<i64> {
    let n = q.tokens.len();
    let mut sums = vec![0i64; n];
    if n == 0 {
        return sums;
    }
    for replay in q.durs.chunks(n) {
        for (s, &d) in sums.iter_mut().zip(replay) {
            *s = s.wrapping_add(d);
        }
    }
    sums
}

fn or<'a>(s: &'a Strings, k: u32, none: &'a str) -> &'a str {
    if k == NO_NAME { none } else { s.get(k) }
}

/// What a position is attributed to: its op when matched, else its kernel name.
fn op_of<'a>(s: &'a Strings, q: &Sequence, l: Option<Label>, k: usize) -> (bool, &'a str) {
    match l {
        Some(l) => (true, or(s, l.op, "(no op found)")),
        None => (false, s.get(q.tokens[k].name)),
    }
}

/// Device time inside replays per op from the sequences and their matches (one per sequence).
pub fn ops_in_graphs(
    seqs: &[Sequence],
    matches: &[SeqMatch],
    s: &Strings,
    top_n: usize,
) -> OpsInGraphs {
    let mut by_op: FxHashMap<&str, Columns> = FxHashMap::default();
    let mut modules: FxHashMap<&str, Columns> = FxHashMap::default();
    let mut frames: FxHashMap<&str, Columns> = FxHashMap::default();
    let mut by_name: FxHashMap<u32, Columns> = FxHashMap::default();
    let mut per_source: FxHashMap<Source, u64> = FxHashMap::default();
    let (mut total_events, mut matched_events, mut matched_ns, mut total_ns) =
        (0u64, 0u64, 0i64, 0i64);
    let mut replays_matched = 0u64;
    let mut graphs = Vec::with_capacity(seqs.len());
    for (qi, (q, m)) in seqs.iter().zip(matches).enumerate() {
        let n = q.tokens.len();
        let replays = q.replays as u64;
        total_events += replays * n as u64;
        if m.matched > 0 {
            replays_matched += replays;
            matched_events += replays * m.matched;
            *per_source.entry(m.source).or_default() += replays * m.matched;
        }
        let mut spans: Vec<OpSpan> = Vec::new();
        let sums = position_sums(q);
        for (k, &ns) in sums.iter().enumerate() {
            let l = m.labels.get(k).copied().flatten();
            let (is_op, op) = op_of(s, q, l, k);
            let l = l.unwrap_or(Label::NONE);
            let at = (qi as u32, k as u32);
            total_ns += ns;
            by_name.entry(q.tokens[k].name).or_default().push(at);
            if is_op {
                matched_ns += ns;
                // Only labels that name one: a trace without Python stacks (every Ascend trace,
                // Kineto without with_stack) takes no second statistics of every duration.
                if l.module != NO_NAME {
                    modules.entry(s.get(l.module)).or_default().push(at);
                }
                if l.frame != NO_NAME {
                    frames.entry(s.get(l.frame)).or_default().push(at);
                }
            }
            by_op.entry(op).or_default().push(at);
            let (module, frame) = (s.get(l.module), s.get(l.frame));
            let label = if is_op {
                op.to_string()
            } else {
                format!("[kernel] {op}")
            };
            match spans.last_mut() {
                Some(x) if x.op == label && x.module == module && x.frame == frame => {
                    x.events += 1;
                    x.ns += ns;
                }
                _ => spans.push(OpSpan {
                    op: label,
                    module: module.to_string(),
                    frame: frame.to_string(),
                    events: 1,
                    ns,
                }),
            }
        }
        graphs.push(sequence_row(q, m, spans));
    }
    let denom = total_ns;
    // Families by kernel name. A family of one name whose durations sit exactly where an op row's
    // do (every unmatched event's row is its kernel name) has that row's statistics: it takes
    // them instead of reading every duration again.
    let mut fam: FxHashMap<&str, (Option<u32>, Columns)> = FxHashMap::default();
    for (id, cols) in by_name {
        let f = fam.entry(family_of(s.get(id))).or_default();
        f.0 = if f.1.is_empty() { Some(id) } else { None };
        f.1.extend(cols);
    }
    // `same`: op row name → its family; `own`: the families that read their durations.
    let mut same: FxHashMap<&str, &str> = FxHashMap::default();
    let mut own: FxHashMap<&str, Columns> = FxHashMap::default();
    for (family, (id, cols)) in fam {
        match id.map(|id| s.get(id)) {
            Some(name) if by_op.get(name) == Some(&cols) => {
                same.insert(name, family);
            }
            _ => {
                own.insert(family, cols);
            }
        }
    }
    // The per-op and per-family statistics each read durations: two tasks, so the other core
    // takes one when the analysis runs last.
    let (ops, (mut families, (modules, frames))) = rayon::join(
        || stats_of(by_op, seqs, denom),
        || {
            let families = stats_of(own, seqs, denom);
            let modules = ranked(modules, seqs, denom, top_n).0;
            let frames = ranked(frames, seqs, denom, top_n).0;
            (families, (modules, frames))
        },
    );
    families.extend(ops.iter().filter_map(|r| {
        let family = same.get(r.name.as_str())?;
        Some(DurStats {
            name: family.to_string(),
            ..r.clone()
        })
    }));
    let families = top(families, top_n).0;
    let (rows, rest) = top(ops, top_n);
    let source = per_source
        .into_iter()
        .max_by_key(|x| (x.1, x.0 as u8))
        .map_or("kernel_name", |x| x.0.as_str());
    OpsInGraphs {
        source: source.into(),
        replays_matched,
        matched_events,
        matched_pct: pct(matched_events as f64, total_events as f64),
        matched_ns,
        matched_ns_pct: pct(matched_ns as f64, total_ns as f64),
        rows,
        other: (
            rest.len() as u64,
            rest.iter().map(|r| r.count).sum(),
            crate::units::sum_ns(rest.iter().map(|r| r.sum_ns)),
        ),
        modules,
        frames,
        families,
        graphs,
    }
}

fn pct(a: f64, b: f64) -> f64 {
    if b == 0.0 { 0.0 } else { a * 100.0 / b }
}

fn sequence_row(q: &Sequence, m: &SeqMatch, ops: Vec<OpSpan>) -> GraphSequence {
    let n = q.tokens.len() as u64;
    GraphSequence {
        graph: q.graph,
        replays: q.replays as u64,
        device_events: n,
        source: m.source.as_str().into(),
        matched_from: m.from.clone(),
        recorded_at_ns: if m.source == Source::None {
            -1
        } else {
            m.recorded_at_ns
        },
        recorded_launches: m.recorded_launches,
        matched_events: m.matched,
        name_checked_events: m.named,
        agreement_pct: pct(m.matched as f64, n as f64),
        checked_by: match (m.source, m.matched, m.named) {
            (_, 0, _) => String::new(),
            (Source::ConnectionId, _, _) => "connection_id".into(),
            (_, a, b) if a == b => "name".into(),
            (_, _, 0) => "kind".into(),
            _ => "name and kind".into(),
        },
        note: m.note.clone(),
        ops,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::graph_mode::extract::Token;

    /// The family and op rows equal statistics taken directly of every duration of each group
    /// (grouped here position by position from the kernel names and labels), whether a family
    /// takes an op row's statistics (`EVENT_WAIT`: one kernel name, every event of it unmatched)
    /// or reads its durations (`MatMulV2` with `MatMulV3`: two names; `AddRmsNorm`: one name,
    /// some of its events matched to an op). Generated sequences.
    #[test]
    fn families_and_rows_equal_direct_statistics() {
        let names = [
            "MatMulV2",
            "MatMulV3",
            "AddRmsNorm",
            "EVENT_WAIT",
            "aten::mm",
        ];
        let s = Strings::from_list(names.iter().map(|n| n.to_string()).collect());
        let seq = |kernels: &[u32], replays: u32, seed: i64| Sequence {
            tokens: kernels
                .iter()
                .map(|&name| Token { kind: 1, name })
                .collect(),
            replays,
            durs: (0..(replays as i64 * kernels.len() as i64))
                .map(|i| (i * 37 + seed) % 101 + 1)
                .collect(),
            ..Sequence::default()
        };
        let seqs = [seq(&[0, 2, 1, 3], 3, 5), seq(&[2, 3], 2, 11)];
        let op = Label {
            op: 4,
            ..Label::NONE
        };
        let matches = [
            SeqMatch::default(),
            SeqMatch {
                source: Source::Capture,
                labels: vec![Some(op), None],
                matched: 1,
                ..SeqMatch::default()
            },
        ];
        // Each position's group: (op row, family), and its durations.
        let mut by_op: std::collections::BTreeMap<String, Vec<i64>> = Default::default();
        let mut by_family: std::collections::BTreeMap<String, Vec<i64>> = Default::default();
        let mut total = 0i64;
        for (q, m) in seqs.iter().zip(&matches) {
            let n = q.tokens.len();
            for k in 0..n {
                let kernel = names[q.tokens[k].name as usize];
                let row = match m.labels.get(k).copied().flatten() {
                    Some(l) => names[l.op as usize],
                    None => kernel,
                };
                let durs: Vec<i64> = (k..q.durs.len()).step_by(n).map(|i| q.durs[i]).collect();
                total += durs.iter().sum::<i64>();
                by_op.entry(row.into()).or_default().extend(&durs);
                by_family
                    .entry(family_of(kernel).into())
                    .or_default()
                    .extend(&durs);
            }
        }
        // The setup covers both ways: a family of two names, and families of one unmatched name.
        assert_eq!(family_of("MatMulV2"), family_of("MatMulV3"));
        assert_ne!(family_of("AddRmsNorm"), family_of("MatMulV2"));
        let direct = |groups: &std::collections::BTreeMap<String, Vec<i64>>, top_n: usize| {
            let mut v: Vec<DurStats> = groups
                .iter()
                .map(|(name, d)| crate::analysis::stats::dur_stats(name.clone(), d.clone(), total))
                .collect();
            v.sort_by(|a, b| b.sum_ns.cmp(&a.sum_ns).then_with(|| a.name.cmp(&b.name)));
            v.truncate(top_n);
            format!("{v:?}")
        };
        for top_n in [1, 2, 10] {
            let o = ops_in_graphs(&seqs, &matches, &s, top_n);
            assert_eq!(
                format!("{:?}", o.families),
                direct(&by_family, top_n),
                "{top_n}"
            );
            assert_eq!(format!("{:?}", o.rows), direct(&by_op, top_n), "{top_n}");
            assert_eq!(o.families.len(), by_family.len().min(top_n));
        }
    }

    /// The sums read replay by replay equal each column summed down its stride, including a
    /// last replay cut short (generated durations; the columns summed independently here).
    #[test]
    fn position_sums_equal_the_columns_summed() {
        for (n, len) in [(1usize, 5usize), (3, 12), (4, 13), (7, 0), (5, 3)] {
            let q = Sequence {
                tokens: vec![Token { kind: 0, name: 0 }; n],
                durs: (0..len as i64).map(|i| i * 37 % 101 + 1).collect(),
                ..Sequence::default()
            };
            let want: Vec<i64> = (0..n)
                .map(|k| (k..len).step_by(n).map(|i| q.durs[i]).sum())
                .collect();
            assert_eq!(position_sums(&q), want, "n {n}, len {len}");
            let by_column: Vec<i64> = (0..n).map(|k| column(&q, k).sum()).collect();
            assert_eq!(by_column, want);
        }
    }
}
