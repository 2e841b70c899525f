//! Clock offsets between ranks, from the collectives they share. Every member of a collective
//! leaves it together (the op ends when the last data arrives), so on one clock their op ends
//! agree to within the last transfer step; a rank whose host clock is off shows that offset in
//! every end. Per pair of clock domains (a host when the input names it, db HOST_INFO; else each
//! rank on its own), the estimate is the median over shared matched ops of the end differences,
//! its spread 1.4826 × their median absolute deviation. Domains are tied to the reference (the
//! cohort's lowest rank) along the pairs with the most shared ops (a maximum spanning tree);
//! an offset is corrected only when it exceeds both [`CLOCK_FLOOR_NS`] and
//! [`CLOCK_NOISE_SIGMAS`] spreads, and a pair sharing fewer than [`MIN_CLOCK_COLLECTIVES`] ops is
//! not estimated at all: its ranks' times are not compared with confidence.

use super::collective_match::Matched;
use super::stats::median;
pub use crate::contract::clock::*;
use std::collections::{BTreeMap, BinaryHeap};

/// One device's clock, before it is written with its file and rank.
#[derive(Debug, Clone)]
pub struct DeviceClock {
    /// Device index it was measured against (itself for the reference).
    pub relative_to: Option<usize>,
    pub estimate_ns: i64,
    pub spread_ns: i64,
    pub collectives: u64,
    /// To subtract from every timestamp of the device.
    pub applied_ns: i64,
    pub status: ClockStatus,
    /// Its clock domain (devices of one domain share a clock).
    pub domain: usize,
    /// How far its corrected times may still be from the reference's: 0 on the reference's
    /// domain; else, along its path, the sum of max([`CLOCK_FLOOR_NS`], 3 × the estimate's
    /// standard error (1.2533 × spread / √n)); unbounded when not estimated.
    pub uncertainty_ns: i64,
}

/// Unbounded uncertainty (a clock not tied to the reference).
pub const UNKNOWN: i64 = i64::MAX / 4;

impl DeviceClock {
    /// Start differences between `self` and `other` at most this are not an arrival order.
    pub fn tie_ns(&self, other: &DeviceClock) -> i64 {
        if self.domain == other.domain {
            0
        } else {
            self.uncertainty_ns
                .saturating_add(other.uncertainty_ns)
                .min(UNKNOWN)
        }
    }
}

/// The clock of every device: `files[d]` is its clock domain (devices of one file share a
/// clock), `hosts[d]` its host when the input names it (else empty); `order[0]` is the
/// reference device. Ranks of one host are measured too (Ascend converts device time per
/// process: the real 2-rank roots of one host differ by 10-80 µs), but when their shared
/// collectives are too few they are taken as one clock instead of unknown.
pub fn estimate(m: &Matched, files: &[&str], hosts: &[&str], order: &[usize]) -> Vec<DeviceClock> {
    let n = files.len();
    let mut domain_of_file: BTreeMap<&str, usize> = BTreeMap::new();
    let mut domain = vec![0usize; n];
    let mut domains = 0usize;
    for &d in order {
        domain[d] = *domain_of_file.entry(files[d]).or_insert_with(|| {
            domains += 1;
            domains - 1
        });
    }
    // Per pair of domains (lower, higher): end(higher) - end(lower) of each shared op, taken
    // between each domain's first member in the group.
    let mut samples: BTreeMap<(usize, usize), Vec<i64>> = BTreeMap::new();
    for g in &m.groups {
        let mut firsts: Vec<(usize, usize)> = Vec::new(); // (domain, member position)
        let mut seen = vec![false; domains];
        for (pos, &d) in g.members.iter().enumerate() {
            if !std::mem::replace(&mut seen[domain[d]], true) {
                firsts.push((domain[d], pos));
            }
        }
        let Some(&(rep, rep_pos)) = firsts.first() else {
            continue;
        };
        for &(dom, pos) in &firsts[1..] {
            let (key, sign) = if rep < dom {
                ((rep, dom), 1)
            } else {
                ((dom, rep), -1)
            };
            let v = samples.entry(key).or_default();
            v.extend((0..g.instances.len()).map(|i| {
                let x = g.spans_of(i);
                sign * (x[pos].1 - x[rep_pos].1)
            }));
        }
    }
    let mut tree = spanning_tree(&samples, domains, domain[order[0]]);
    let root_host = hosts[order[0]];
    for &d in order {
        let t = &mut tree[domain[d]];
        if t.status == ClockStatus::TooFewCollectives
            && !root_host.is_empty()
            && hosts[d] == root_host
        {
            t.status = ClockStatus::SameHost;
            t.applied_ns = 0;
            t.uncertainty_ns = CLOCK_FLOOR_NS;
        }
    }
    let first_of_domain: Vec<usize> = (0..domains)
        .map(|x| order.iter().copied().find(|&d| domain[d] == x).unwrap_or(0))
        .collect();
    (0..n)
        .map(|d| {
            let dom = domain[d];
            let t = &tree[dom];
            let same_file = d != first_of_domain[dom];
            let status = if d == order[0] {
                ClockStatus::Reference
            } else if same_file && dom == domain[order[0]] {
                ClockStatus::SameHost
            } else {
                t.status
            };
            DeviceClock {
                relative_to: if same_file {
                    Some(first_of_domain[dom])
                } else {
                    t.parent.map(|p| first_of_domain[p])
                },
                estimate_ns: t.estimate_ns,
                spread_ns: t.spread_ns,
                collectives: t.collectives,
                applied_ns: t.applied_ns,
                status,
                domain: dom,
                uncertainty_ns: t.uncertainty_ns,
            }
        })
        .collect()
}

/// One clock domain in the tree.
#[derive(Debug, Clone)]
struct Node {
    parent: Option<usize>,
    estimate_ns: i64,
    spread_ns: i64,
    collectives: u64,
    applied_ns: i64,
    status: ClockStatus,
    uncertainty_ns: i64,
}

/// Ties every domain to `root` along the pairs with the most shared ops (Prim's algorithm on
/// sample counts), estimating each edge and accumulating the corrected ones.
fn spanning_tree(
    samples: &BTreeMap<(usize, usize), Vec<i64>>,
    domains: usize,
    root: usize,
) -> Vec<Node> {
    let mut adj: Vec<Vec<(usize, &Vec<i64>, i64)>> = vec![Vec::new(); domains];
    for (&(a, b), v) in samples {
        adj[a].push((b, v, 1));
        adj[b].push((a, v, -1));
    }
    let unknown = Node {
        parent: None,
        estimate_ns: 0,
        spread_ns: 0,
        collectives: 0,
        applied_ns: 0,
        status: ClockStatus::TooFewCollectives,
        uncertainty_ns: UNKNOWN,
    };
    let mut out = vec![unknown; domains];
    if domains == 0 {
        return out;
    }
    let mut done = vec![false; domains];
    out[root].status = ClockStatus::Reference;
    out[root].uncertainty_ns = 0;
    let mut heap: BinaryHeap<(usize, std::cmp::Reverse<usize>, usize, i64)> = BinaryHeap::new();
    let push = |heap: &mut BinaryHeap<_>, from: usize, adj: &Vec<Vec<(usize, &Vec<i64>, i64)>>| {
        for &(to, v, sign) in &adj[from] {
            heap.push((v.len(), std::cmp::Reverse(to), from, sign));
        }
    };
    done[root] = true;
    push(&mut heap, root, &adj);
    while let Some((_, std::cmp::Reverse(to), from, sign)) = heap.pop() {
        if done[to] {
            continue;
        }
        done[to] = true;
        let key = if sign > 0 { (from, to) } else { (to, from) };
        let v: Vec<i64> = samples[&key].iter().map(|x| sign * x).collect();
        let est = median(v.clone()).round() as i64;
        let spread = (median(v.iter().map(|x| (x - est).abs()).collect()) * 1.4826).round() as i64;
        let n = v.len() as u64;
        let standard_error = 1.2533 * spread as f64 / (n as f64).sqrt();
        let disagree = spread > CLOCK_MAX_SPREAD_NS;
        let uncertainty = if n < MIN_CLOCK_COLLECTIVES || disagree {
            UNKNOWN
        } else {
            let edge = (CLOCK_FLOOR_NS as f64).max(CLOCK_NOISE_SIGMAS * standard_error) as i64;
            out[from].uncertainty_ns.saturating_add(edge).min(UNKNOWN)
        };
        let (status, applied) = if n < MIN_CLOCK_COLLECTIVES {
            (ClockStatus::TooFewCollectives, out[from].applied_ns)
        } else if disagree {
            (ClockStatus::EndsDisagree, out[from].applied_ns)
        } else if (est.abs() as f64)
            > (CLOCK_FLOOR_NS as f64).max(CLOCK_NOISE_SIGMAS * spread as f64)
        {
            (ClockStatus::Corrected, out[from].applied_ns + est)
        } else {
            (ClockStatus::WithinNoise, out[from].applied_ns)
        };
        out[to] = Node {
            parent: Some(from),
            estimate_ns: est,
            spread_ns: spread,
            collectives: n,
            applied_ns: applied,
            status,
            uncertainty_ns: uncertainty,
        };
        push(&mut heap, to, &adj);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::collective_match::{Group, Instance};
    use super::*;

    fn group(members: Vec<usize>, ends: &[&[i64]]) -> Group {
        let k = ends[0].len();
        Group {
            name: String::new(),
            unmatched: vec![0; members.len()],
            members,
            instances: (0..k)
                .map(|i| Instance {
                    name: 0,
                    occurrence: i as u64,
                })
                .collect(),
            spans: (0..k)
                .flat_map(|i| ends.iter().map(move |e| (e[i] - 5, e[i])))
                .collect(),
            unmatched_names: BTreeMap::new(),
            realigned: 0,
        }
    }

    #[test]
    fn a_minute_off_is_corrected_and_microseconds_are_left_alone() {
        const MIN: i64 = 60_000_000_000;
        let m = Matched {
            names: vec!["x".into()],
            groups: vec![group(
                vec![0, 1, 2],
                &[
                    &[1_000, 50_000, 90_000, 200_000],
                    // Ends 8 ns early, 1 minute late; the third rank 7 µs early (within the floor).
                    &[MIN + 992, MIN + 49_991, MIN + 89_993, MIN + 199_992],
                    &[-7_000 + 1_000, 43_000, 83_000, 193_000],
                ],
            )],
        };
        let c = estimate(&m, &["a", "b", "c"], &["", "", ""], &[0, 1, 2]);
        assert_eq!(c[0].status, ClockStatus::Reference);
        assert_eq!(c[1].status, ClockStatus::Corrected);
        // The median of (-8, -9, -7, -8) µs off the minute.
        assert_eq!(c[1].applied_ns, MIN - 8);
        assert_eq!(c[1].collectives, 4);
        assert_eq!(c[2].status, ClockStatus::WithinNoise);
        assert_eq!(c[2].applied_ns, 0);
        // Two ops are too few; on one host they are taken as one clock.
        let thin = Matched {
            names: vec!["x".into()],
            groups: vec![group(vec![0, 1], &[&[1_000, 2_000], &[MIN, MIN + 1_000]])],
        };
        let c = estimate(&thin, &["a", "b"], &["", ""], &[0, 1]);
        assert_eq!(c[1].status, ClockStatus::TooFewCollectives);
        assert_eq!(c[1].applied_ns, 0);
        let c = estimate(&thin, &["a", "b"], &["h", "h"], &[0, 1]);
        assert_eq!(c[1].status, ClockStatus::SameHost);
        assert_eq!(c[1].applied_ns, 0);
    }
}
