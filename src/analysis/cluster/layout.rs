//! The job's layout from what its files state, most authoritative first: `distributed_args`
//! (the parallel sizes; ranks placed in Megatron-LM's order: `rank = ((stage * dp + dp_index) *
//! cp + cp_index) * tp + tp_index`, as msprof-analyze's cluster_utils does), `parallel_group_info`
//! and Kineto's process groups (each group's ranks; a rank's index in its pp / dp / tp / exp group
//! is its stage / replica / shard / expert index), else inferred from the collectives the ranks
//! share (a group whose ops are all sends and receives is a pipeline; its sorted ranks are its
//! stages). Sources that disagree give a warning naming both; stated groups win over the order
//! `distributed_args` implies. Peer sets are the ranks with the same stage and TP index.

use super::facts::{JobFacts, StatedArgs, StatedGroup, p2p_kind};
use crate::analysis::cross_rank::DeviceExtract;
use crate::contract::layout::*;
use std::collections::{BTreeMap, BTreeSet};

/// The largest world a layout lists rank by rank (beyond it: the present ranks only).
const MAX_LISTED_WORLD: u32 = 1 << 17;

/// The kind of a group from the job's name for it (Megatron-LM / MindSpeed, MindSpore, PyTorch).
pub fn kind_of(name: &str) -> GroupKind {
    match name {
        "tp" => GroupKind::Tp,
        "pp" => GroupKind::Pp,
        "dp" => GroupKind::Dp,
        "cp" => GroupKind::Cp,
        "exp" | "ep" => GroupKind::Ep,
        "edp" => GroupKind::Edp,
        "default_group" | "default_pg" | "hccl_world_group" => GroupKind::World,
        _ => GroupKind::Other,
    }
}

/// The layout without the comparisons (see `super::compute`), and warnings.
pub fn layout(facts: &[JobFacts], extracts: &[DeviceExtract]) -> Layout {
    let mut warnings = Vec::new();
    let present: BTreeSet<i32> = facts.iter().map(|f| f.rank).filter(|&r| r >= 0).collect();
    let summary: BTreeSet<i32> = facts
        .iter()
        .filter(|f| f.summary_only && f.rank >= 0)
        .map(|f| f.rank)
        .collect();
    let args = stated_args(facts, &mut warnings);
    let (groups, stated) = stated_groups(facts, &mut warnings);
    let (world_size, world_size_source) = world(facts, args, &groups, &mut warnings);
    let (source, roles, groups) = if has_roles(&groups) {
        let roles = roles_from_groups(&groups);
        if let Some(a) = args {
            check_against_args(a, &groups, &mut warnings);
        }
        (LayoutSource::GroupInfo, roles, groups)
    } else if let (Some(a), Some(w)) = (args, world_size) {
        let groups = if stated {
            groups
        } else {
            megatron_groups(a, w)
        };
        (LayoutSource::DistributedArgs, roles_from_args(a, w), groups)
    } else {
        let groups = if stated {
            groups
        } else {
            inferred_groups(extracts, facts)
        };
        let roles = roles_from_groups(&groups);
        let source = if groups.iter().any(|g| g.kind == GroupKind::Pp) {
            LayoutSource::Inferred
        } else {
            LayoutSource::None
        };
        (source, roles, groups)
    };
    let listed: Vec<i32> = match world_size.filter(|&w| w <= MAX_LISTED_WORLD) {
        Some(w) => (0..w as i32).collect(),
        None => present.iter().copied().collect(),
    };
    let ranks: Vec<RankRole> = listed
        .iter()
        .map(|&r| {
            let x = roles.get(&r).copied().unwrap_or_default();
            RankRole {
                rank: r,
                pp_stage: x.0,
                dp_index: x.1,
                tp_index: x.2,
                ep_index: x.3,
                present: present.contains(&r),
                summary_only: summary.contains(&r),
            }
        })
        .collect();
    let peer_sets = peer_sets(&ranks, source);
    Layout {
        world_size,
        world_size_source,
        source,
        sizes: args.map(|a| Sizes {
            tp: a.tp,
            pp: a.pp,
            dp: a.dp,
            cp: a.cp,
            ep: a.ep,
        }),
        groups,
        ranks,
        peer_sets,
        warnings,
        ..Layout::default()
    }
}

/// The first file's `distributed_args`; another file stating other sizes is a warning.
fn stated_args(facts: &[JobFacts], warnings: &mut Vec<String>) -> Option<StatedArgs> {
    let mut first: Option<(&JobFacts, StatedArgs)> = None;
    let mut differ = 0u64;
    for f in facts {
        let Some(a) = f.args else { continue };
        match first {
            None => first = Some((f, a)),
            Some((g, b)) if (b.tp, b.pp, b.dp, b.cp, b.ep) != (a.tp, a.pp, a.dp, a.cp, a.ep) => {
                differ += 1;
                if differ == 1 {
                    warnings.push(format!(
                        "distributed_args disagree: {} says TP{} PP{} DP{}, {} says TP{} PP{} DP{} (the first is used)",
                        g.file, b.tp, b.pp, b.dp, f.file, a.tp, a.pp, a.dp
                    ));
                }
            }
            _ => {}
        }
    }
    first.map(|x| x.1)
}

/// Every stated group once (by id), its kind from its name; a group stated with other ranks by
/// another file is a warning. Returns whether any file stated groups.
fn stated_groups(facts: &[JobFacts], warnings: &mut Vec<String>) -> (Vec<LayoutGroup>, bool) {
    let mut by_id: BTreeMap<&str, (&StatedGroup, &str)> = BTreeMap::new();
    let mut conflicts = 0u64;
    for f in facts {
        for g in &f.groups {
            match by_id.get(g.id.as_str()) {
                None => {
                    by_id.insert(&g.id, (g, &f.file));
                }
                Some((h, from))
                    if h.ranks != g.ranks && !g.ranks.is_empty() && !h.ranks.is_empty() =>
                {
                    conflicts += 1;
                    if conflicts == 1 {
                        warnings.push(format!(
                            "group {} ({}) has ranks {:?} in {from} but {:?} in {} (the first is used)",
                            g.id, g.name, h.ranks, g.ranks, f.file
                        ));
                    }
                }
                _ => {}
            }
        }
    }
    let stated = !by_id.is_empty();
    let mut groups: Vec<LayoutGroup> = by_id
        .into_values()
        .filter(|(g, _)| !g.ranks.is_empty())
        .map(|(g, _)| LayoutGroup {
            id: g.id.clone(),
            name: g.name.clone(),
            kind: kind_of(&g.name),
            ranks: g.ranks.clone(),
        })
        .collect();
    groups.sort_by(|a, b| (a.kind, &a.ranks, &a.id).cmp(&(b.kind, &b.ranks, &b.id)));
    (groups, stated)
}

/// The world size: the largest a file states (a Kineto header, distributed_args), else the
/// world group's or the groups' reach.
fn world(
    facts: &[JobFacts],
    args: Option<StatedArgs>,
    groups: &[LayoutGroup],
    warnings: &mut Vec<String>,
) -> (Option<u32>, String) {
    let stated: Vec<(&JobFacts, i32)> = facts
        .iter()
        .filter(|f| f.world_size > 0)
        .map(|f| (f, f.world_size))
        .collect();
    if let Some(&(f, w)) = stated.iter().max_by_key(|x| x.1) {
        if let Some(&(g, v)) = stated.iter().find(|x| x.1 != w) {
            warnings.push(format!(
                "world size: {} says {w}, {} says {v} (the larger is used)",
                f.file, g.file
            ));
        }
        if let Some(a) = args {
            let product = a.tp as u64 * a.pp as u64 * a.dp as u64 * a.cp as u64;
            if product != w as u64 {
                warnings.push(format!(
                    "distributed_args: TP{} x PP{} x DP{} x CP{} = {product}, but the world size is {w}",
                    a.tp, a.pp, a.dp, a.cp
                ));
            }
        }
        return (Some(w as u32), f.file.clone());
    }
    if let Some(a) = args {
        return (Some(a.tp * a.pp * a.dp * a.cp), "distributed_args".into());
    }
    if let Some(g) = groups.iter().find(|g| g.kind == GroupKind::World) {
        return (Some(g.ranks.len() as u32), "parallel_group_info".into());
    }
    (None, String::new())
}

/// (stage, dp index, tp index, ep index) of a rank.
type Role = (Option<u32>, Option<u32>, Option<u32>, Option<u32>);

fn has_roles(groups: &[LayoutGroup]) -> bool {
    groups
        .iter()
        .any(|g| matches!(g.kind, GroupKind::Pp | GroupKind::Dp | GroupKind::Tp))
}

/// Each rank's index in its pp / dp / tp / ep group (ranks sorted).
fn roles_from_groups(groups: &[LayoutGroup]) -> BTreeMap<i32, Role> {
    let mut out: BTreeMap<i32, Role> = BTreeMap::new();
    for g in groups {
        for (k, &r) in g.ranks.iter().enumerate() {
            let e = out.entry(r).or_default();
            let k = Some(k as u32);
            match g.kind {
                GroupKind::Pp => e.0 = k,
                GroupKind::Dp => e.1 = k,
                GroupKind::Tp => e.2 = k,
                GroupKind::Ep => e.3 = k,
                _ => {}
            }
        }
    }
    // A job whose groups name no pipeline has one stage, and one shard without TP groups.
    let pp = groups.iter().any(|g| g.kind == GroupKind::Pp);
    let tp = groups.iter().any(|g| g.kind == GroupKind::Tp);
    let dp = groups.iter().any(|g| g.kind == GroupKind::Dp);
    for e in out.values_mut() {
        if !pp && dp {
            e.0 = e.0.or(Some(0));
        }
        if !tp && (pp || dp) {
            e.2 = e.2.or(Some(0));
        }
    }
    out
}

/// Megatron-LM's order: TP fastest, then CP, then DP, then PP; EP chunks of the DP group.
fn roles_from_args(a: StatedArgs, world: u32) -> BTreeMap<i32, Role> {
    (0..world.min(MAX_LISTED_WORLD))
        .map(|r| {
            let tp = r % a.tp;
            let dp = (r / (a.tp * a.cp)) % a.dp;
            let stage = r / (a.tp * a.cp * a.dp);
            let ep = (a.ep > 1).then(|| dp % a.ep);
            (r as i32, (Some(stage), Some(dp), Some(tp), ep))
        })
        .collect()
}

/// The groups `distributed_args` implies in Megatron-LM's order (for the report, when no file
/// lists them).
fn megatron_groups(a: StatedArgs, world: u32) -> Vec<LayoutGroup> {
    if world > MAX_LISTED_WORLD {
        return Vec::new();
    }
    let roles = roles_from_args(a, world);
    let mut by: BTreeMap<(GroupKind, Vec<Option<u32>>), Vec<i32>> = BTreeMap::new();
    for (&r, &(s, d, t, _)) in &roles {
        by.entry((GroupKind::Tp, vec![s, d])).or_default().push(r);
        by.entry((GroupKind::Dp, vec![s, t])).or_default().push(r);
        by.entry((GroupKind::Pp, vec![d, t])).or_default().push(r);
    }
    let mut out: Vec<LayoutGroup> = by
        .into_iter()
        .filter(|(_, ranks)| ranks.len() > 1)
        .map(|((kind, _), ranks)| LayoutGroup {
            id: String::new(),
            name: kind.as_str().to_string(),
            kind,
            ranks,
        })
        .collect();
    out.sort_by(|a, b| (a.kind, &a.ranks).cmp(&(b.kind, &b.ranks)));
    out
}

/// A stated pp / dp / tp group that is not one `distributed_args` implies is a warning.
fn check_against_args(a: StatedArgs, groups: &[LayoutGroup], warnings: &mut Vec<String>) {
    let world = a.tp * a.pp * a.dp * a.cp;
    let implied = megatron_groups(a, world);
    let odd = groups.iter().find(|g| {
        matches!(g.kind, GroupKind::Pp | GroupKind::Dp | GroupKind::Tp)
            && g.ranks.len() > 1
            && !implied
                .iter()
                .any(|m| m.kind == g.kind && m.ranks == g.ranks)
    });
    if let Some(g) = odd {
        warnings.push(format!(
            "parallel_group_info's {} group {:?} is not one that distributed_args (TP{} PP{} DP{}) implies in Megatron-LM's order: the stated groups are used",
            g.name, g.ranks, a.tp, a.pp, a.dp
        ));
    }
}

/// Groups from the collectives the ranks share: each communicator group with the ranks that
/// have ops in it; a group whose ops are all sends and receives is a pipeline (`pp`).
fn inferred_groups(extracts: &[DeviceExtract], facts: &[JobFacts]) -> Vec<LayoutGroup> {
    // group name → (ranks, every op p2p)
    let mut by: BTreeMap<String, (BTreeSet<i32>, bool)> = BTreeMap::new();
    for x in extracts.iter().filter(|x| x.device.rank >= 0) {
        let mut p2p_only: Vec<bool> = vec![true; x.groups.len()];
        let mut used = vec![false; x.groups.len()];
        let p2p_name: Vec<bool> = x.names.iter().map(|n| p2p_kind(n).is_some()).collect();
        for &(name, group, _, _) in &x.collectives {
            used[group as usize] = true;
            p2p_only[group as usize] &= p2p_name[name as usize];
        }
        for (g, name) in x.groups.iter().enumerate() {
            if !used[g] || name.is_empty() {
                continue;
            }
            let e = by.entry(name.clone()).or_insert((BTreeSet::new(), true));
            e.0.insert(x.device.rank);
            e.1 &= p2p_only[g];
        }
    }
    for f in facts.iter().filter(|f| f.summary_only && f.rank >= 0) {
        for op in &f.vendor_ops {
            let e = by
                .entry(op.group.clone())
                .or_insert((BTreeSet::new(), true));
            e.0.insert(f.rank);
            e.1 &= op.p2p;
        }
    }
    by.into_iter()
        .filter(|(_, (ranks, _))| ranks.len() > 1)
        .map(|(id, (ranks, p2p))| LayoutGroup {
            id,
            name: String::new(),
            kind: if p2p { GroupKind::Pp } else { GroupKind::Other },
            ranks: ranks.into_iter().collect(),
        })
        .collect()
}

/// Ranks with the same stage and TP index, when the layout places them (present ranks only, each
/// set in rank order); none without a layout.
fn peer_sets(ranks: &[RankRole], source: LayoutSource) -> Vec<PeerSet> {
    if source == LayoutSource::None {
        return Vec::new();
    }
    let mut by: BTreeMap<(Option<u32>, Option<u32>), Vec<i32>> = BTreeMap::new();
    for r in ranks.iter().filter(|r| r.present && r.pp_stage.is_some()) {
        by.entry((r.pp_stage, r.tp_index)).or_default().push(r.rank);
    }
    by.into_iter()
        .map(|((stage, tp_index), ranks)| PeerSet {
            stage,
            tp_index,
            ranks,
        })
        .collect()
}
