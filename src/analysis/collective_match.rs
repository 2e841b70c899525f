//! Collective ops matched across ranks by identity, not by position: an op belongs to its
//! communicator group (HCCL `Group <name> Communication`; one unnamed group when the format names
//! none) and is matched within that group only, by name and occurrence. The members of a group
//! are the ranks holding any of its ops; an op instance is matched when every member holds it.
//!
//! Occurrences are aligned, not counted from the start: a rank that ran one warm-up op more, or
//! whose capture began one op later, holds the same ops shifted by one. For each (group, name) the
//! member holding the most ops is the reference, and every other member's sequence is shifted by
//! the offset (at most [`MAX_SHIFT`]) under which the gaps between consecutive op ends agree with
//! the reference's best (those gaps do not depend on the rank's clock). A shift is taken only when
//! it agrees clearly better than none. Ops left without a partner are counted and named.

use super::intervals::Iv;
use std::collections::BTreeMap;

/// Largest shift of a rank's occurrences tried when aligning it to the reference.
pub const MAX_SHIFT: i64 = 8;

/// One device's collective ops as the matcher reads them.
pub struct DeviceOps<'a> {
    pub names: &'a [String],
    pub groups: &'a [String],
    /// (name index, group index, start, end), by start.
    pub ops: &'a [(u32, u32, i64, i64)],
}

/// One op instance held by every member of its group.
#[derive(Debug, Clone)]
pub struct Instance {
    /// Index in [`Matched::names`].
    pub name: u32,
    /// Occurrence of the name on the group's reference member (from 0).
    pub occurrence: u64,
}

/// One communicator group.
#[derive(Debug, Clone)]
pub struct Group {
    pub name: String,
    /// Device indexes, in the order the caller gave (rank order).
    pub members: Vec<usize>,
    pub instances: Vec<Instance>,
    /// Start and end of each instance on each member, instance by instance, each in
    /// [`Group::members`] order ([`Group::spans_of`]): one list, not one per instance.
    pub spans: Vec<Iv>,
    /// Per member: its ops of this group left without a partner.
    pub unmatched: Vec<u64>,
    /// Unmatched ops by name index.
    pub unmatched_names: BTreeMap<u32, u64>,
    /// (member, name) sequences shifted to align.
    pub realigned: u64,
}

impl Group {
    /// Start and end of instance `i` on each member, in [`Group::members`] order.
    pub fn spans_of(&self, i: usize) -> &[Iv] {
        let k = self.members.len();
        &self.spans[i * k..(i + 1) * k]
    }
}

/// Every group of a cohort.
#[derive(Debug, Clone, Default)]
pub struct Matched {
    pub names: Vec<String>,
    pub groups: Vec<Group>,
}

/// Sorted, deduplicated strings of every device, and each device's local index → global id.
fn global_ids<'a>(
    devs: &'a [DeviceOps<'a>],
    of: impl Fn(&'a DeviceOps<'a>) -> &'a [String],
) -> (Vec<&'a str>, Vec<Vec<u32>>) {
    let mut all: Vec<&str> = devs
        .iter()
        .flat_map(|d| of(d).iter().map(String::as_str))
        .collect();
    all.sort_unstable();
    all.dedup();
    let ids = devs
        .iter()
        .map(|d| {
            of(d)
                .iter()
                .map(|x| all.binary_search(&x.as_str()).unwrap_or(0) as u32)
                .collect()
        })
        .collect();
    (all, ids)
}

/// Matches the ops of `devs`, whose indexes in `order` give the member order (rank order).
pub fn match_ops(devs: &[DeviceOps<'_>], order: &[usize]) -> Matched {
    let (names, name_ids) = global_ids(devs, |d| d.names);
    let (groups, group_ids) = global_ids(devs, |d| d.groups);
    // (group, name) → per device its spans of that name, by start.
    let mut seqs: BTreeMap<(u32, u32), BTreeMap<usize, Vec<Iv>>> = BTreeMap::new();
    for &d in order {
        for &(k, g, s, e) in devs[d].ops {
            let key = (group_ids[d][g as usize], name_ids[d][k as usize]);
            seqs.entry(key)
                .or_default()
                .entry(d)
                .or_default()
                .push((s, e));
        }
    }
    let rank_pos: BTreeMap<usize, usize> = order.iter().enumerate().map(|(i, &d)| (d, i)).collect();
    let mut out: Vec<Group> = Vec::new();
    let mut at = 0usize;
    let keys: Vec<(u32, u32)> = seqs.keys().copied().collect();
    for (gid, gname) in groups.iter().enumerate() {
        let gid = gid as u32;
        let of_group: Vec<&(u32, u32)> = keys[at..].iter().take_while(|k| k.0 == gid).collect();
        at += of_group.len();
        let mut members: Vec<usize> = of_group
            .iter()
            .flat_map(|k| seqs[k].keys().copied())
            .collect();
        members.sort_by_key(|d| rank_pos[d]);
        members.dedup();
        let mut group = Group {
            name: gname.to_string(),
            unmatched: vec![0; members.len()],
            members,
            instances: Vec::new(),
            spans: Vec::new(),
            unmatched_names: BTreeMap::new(),
            realigned: 0,
        };
        for key in of_group {
            match_name(&mut group, key.1, &seqs[key]);
        }
        out.push(group);
    }
    Matched {
        names: names.into_iter().map(str::to_string).collect(),
        groups: out,
    }
}

/// Matches one name's sequences of the members of `g`.
fn match_name(g: &mut Group, name: u32, by_dev: &BTreeMap<usize, Vec<Iv>>) {
    const EMPTY: &[Iv] = &[];
    let seq: Vec<&[Iv]> = g
        .members
        .iter()
        .map(|d| by_dev.get(d).map_or(EMPTY, Vec::as_slice))
        .collect();
    // The reference: the member with the most ops of the name (the first on a tie).
    let r = (0..seq.len())
        .max_by_key(|&m| (seq[m].len(), std::cmp::Reverse(m)))
        .expect("a group has a member");
    let shifts: Vec<i64> = (0..seq.len())
        .map(|m| if m == r { 0 } else { shift(seq[r], seq[m]) })
        .collect();
    g.realigned += shifts.iter().filter(|&&s| s != 0).count() as u64;
    let mut used = vec![0u64; seq.len()];
    for i in 0..seq[r].len() as i64 {
        let at = |m: usize| {
            let j = i + shifts[m];
            (j >= 0).then(|| seq[m].get(j as usize).copied()).flatten()
        };
        if (0..seq.len()).all(|m| at(m).is_some()) {
            used.iter_mut().for_each(|u| *u += 1);
            g.spans.extend((0..seq.len()).filter_map(at));
            g.instances.push(Instance {
                name,
                occurrence: i as u64,
            });
        }
    }
    for m in 0..seq.len() {
        let left = seq[m].len() as u64 - used[m];
        g.unmatched[m] += left;
        if left > 0 {
            *g.unmatched_names.entry(name).or_default() += left;
        }
    }
}

/// The shift of `m`'s occurrences (its op `i + shift` is the reference's op `i`) under which the
/// gaps between consecutive op ends agree best with the reference's; 0 unless another agrees
/// clearly better.
fn shift(r: &[Iv], m: &[Iv]) -> i64 {
    if r.len() < 3 || m.len() < 2 {
        return 0;
    }
    let gaps = |v: &[Iv]| -> Vec<i64> { v.windows(2).map(|w| w[1].1 - w[0].1).collect() };
    let (gr, gm) = (gaps(r), gaps(m));
    // Gap i of the reference agrees with gap i + s of m within 5% (and 1 µs).
    let agree = |s: i64| -> (u64, u64) {
        let (mut yes, mut of) = (0u64, 0u64);
        for (i, &a) in gr.iter().enumerate() {
            let j = i as i64 + s;
            if j < 0 || j >= gm.len() as i64 {
                continue;
            }
            let b = gm[j as usize];
            of += 1;
            yes += ((a - b).abs() <= 1_000 + a.abs() / 20) as u64;
        }
        (yes, of)
    };
    let (zero, zero_of) = agree(0);
    let mut best = (0i64, zero);
    for s in (-MAX_SHIFT..=MAX_SHIFT).filter(|&s| s != 0) {
        let (yes, of) = agree(s);
        // Clearly better: more agreeing gaps by at least 2 and by a fifth of the compared ones,
        // over at least half the gaps shift 0 compares.
        if of * 2 >= zero_of && yes >= best.1 + 2 && yes * 5 >= best.1 * 5 + of && yes > best.1 {
            best = (s, yes);
        }
    }
    best.0
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Ops ending at these µs (irregular gaps, as a real trace's).
    fn seq(ends_us: &[i64]) -> Vec<Iv> {
        ends_us
            .iter()
            .map(|&e| (e * 1_000 - 10_000, e * 1_000))
            .collect()
    }

    #[test]
    fn a_missing_first_op_is_realigned() {
        let full = [100, 250, 330, 600, 610, 900, 1300, 1320];
        let r = seq(&full);
        // The same ops 60 s later on another clock, the first (warm-up) one missing.
        let m = seq(&full[1..]
            .iter()
            .map(|e| e + 60_000_000_000)
            .collect::<Vec<_>>());
        assert_eq!(shift(&r, &m), -1);
        // Equal sequences stay put.
        assert_eq!(shift(&r, &r), 0);
        // A periodic sequence gives no reason to shift.
        let p = seq(&[100, 200, 300, 400, 500, 600]);
        assert_eq!(shift(&p, &p[1..]), 0);
    }

    #[test]
    fn matched_within_groups_only() {
        let names = vec!["allReduce".to_string()];
        let g0 = vec!["tp0".to_string()];
        let g1 = vec!["tp1".to_string()];
        let ops = [(0u32, 0u32, 0i64, 10i64), (0, 0, 20, 30)];
        let devs = [
            DeviceOps {
                names: &names,
                groups: &g0,
                ops: &ops,
            },
            DeviceOps {
                names: &names,
                groups: &g0,
                ops: &ops[..1],
            },
            DeviceOps {
                names: &names,
                groups: &g1,
                ops: &ops,
            },
        ];
        let m = match_ops(&devs, &[0, 1, 2]);
        assert_eq!(m.groups.len(), 2);
        assert_eq!(m.groups[0].members, vec![0, 1]);
        assert_eq!(m.groups[0].instances.len(), 1);
        assert_eq!(m.groups[0].unmatched, vec![1, 0]);
        assert_eq!(m.groups[1].members, vec![2]);
        assert_eq!(m.groups[1].instances.len(), 2);
    }
}
