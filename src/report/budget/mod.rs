//! Budgets filled by importance: the one trimmer of every bounded output (the MCP tools, the
//! Markdown brief, the Python `Report.brief`). An output is cut into atoms, each with a
//! [`Tier`] (what it is to the reader) and its size in bytes; [`fill`] takes them in priority
//! order and keeps what fits, with two rules:
//!
//! * **tiers**: once an atom of a tier does not fit, nothing of a lower tier is kept (so nothing
//!   of a higher tier is ever cut while something of a lower one stays);
//! * **lists** are cut from their tails: an entry is kept only when the entry before it is
//!   (lists are sorted largest first, so the head is what matters).
//!
//! Within a tier, atoms go by their [`SortKey`]: the list level (entry k of every list before
//! entry k + 1 of any, so the longest lists are the last to complete), then the device (every
//! analysis's first device before any second), then the group (the analysis, in registry order),
//! then the order of the output. [`fit`] finds the selection whose rendered output fits a byte
//! budget, measured on the output itself. This module knows no output format: `json.rs` makes
//! atoms of a JSON value (docs/mcp.md), `render::markdown` of the brief's sections.

pub mod json;
mod tiers;

pub use json::{Bounded, bound};
pub use tiers::TOP_FINDINGS;

/// What an atom is to a reader, most important first (docs/json-output.md, "Bounded outputs").
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Tier {
    /// The schema and the verdict: status, kind, statement, reasons.
    Verdict = 0,
    /// The headline lines.
    Headline = 1,
    /// The advisor's top findings: rule, severity, statement, time at stake, recommendation.
    Advice = 2,
    /// Each rank's device-time shares (computing / exposed communication / free).
    RankShares = 3,
    /// The cross-rank claims: slowest rank, waited-for rank, each rank's step shares.
    CrossRank = 4,
    /// Each analysis's summary fields (per device), the report's own summary.
    Summary = 5,
    /// List entries, entry k of every list before entry k + 1 of any.
    List = 6,
}

impl Tier {
    /// The tiers that are never cut: a budget too small for them is an error.
    pub fn essential(self) -> bool {
        self <= Tier::Headline
    }

    pub fn name(self) -> &'static str {
        match self {
            Tier::Verdict => "verdict",
            Tier::Headline => "headline",
            Tier::Advice => "top advice",
            Tier::RankShares => "per-rank device-time shares",
            Tier::CrossRank => "cross-rank claims",
            Tier::Summary => "per-analysis summaries",
            Tier::List => "lists",
        }
    }
}

/// Priority of an atom: smaller first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct SortKey {
    pub tier: Tier,
    /// The largest list index on the atom's path (lists of devices, ranks and cohorts aside).
    pub level: u32,
    /// The index in its list of devices, ranks or cohorts (0 outside one).
    pub device: u32,
    /// The analysis (registry order) or top-level part it belongs to.
    pub group: u32,
    /// Order in the output.
    pub seq: u32,
}

/// No container: the atom or container sits at the root.
pub const ROOT: u32 = u32::MAX;

/// A part of the output that exists when anything under it is kept (an object, a list, a list
/// entry, a section): creating it costs `overhead` bytes.
#[derive(Debug, Clone)]
pub struct Container {
    pub parent: u32,
    pub overhead: u32,
    /// Set for a list entry: (the list's container, its index).
    pub item_of: Option<(u32, u32)>,
}

/// The smallest unit kept or cut.
#[derive(Debug, Clone)]
pub struct Atom {
    pub key: SortKey,
    pub bytes: u32,
    /// The container it writes into.
    pub parent: u32,
    /// Set when the atom itself is a list entry: (the list's container, its index).
    pub item_of: Option<(u32, u32)>,
}

/// An output cut into atoms.
#[derive(Debug, Default)]
pub struct Plan {
    pub containers: Vec<Container>,
    pub atoms: Vec<Atom>,
}

/// What [`fill`] kept.
#[derive(Debug, Clone)]
pub struct Selection {
    pub atoms: Vec<bool>,
    pub containers: Vec<bool>,
    /// Estimated bytes of what was kept.
    pub bytes: usize,
}

impl Selection {
    /// Every essential atom (verdict, headline) kept.
    pub fn has_essentials(&self, plan: &Plan) -> bool {
        plan.atoms
            .iter()
            .zip(&self.atoms)
            .all(|(a, &k)| k || !a.key.tier.essential())
    }
}

impl Plan {
    /// The atoms in priority order.
    pub fn order(&self) -> Vec<u32> {
        let mut o: Vec<u32> = (0..self.atoms.len() as u32).collect();
        o.sort_by_key(|&i| self.atoms[i as usize].key);
        o
    }

    /// Everything kept.
    pub fn all(&self) -> Selection {
        Selection {
            atoms: vec![true; self.atoms.len()],
            containers: vec![true; self.containers.len()],
            bytes: usize::MAX,
        }
    }
}

/// Keeps atoms of at most `up_to` in `order` while they fit `budget` bytes, by the tier and
/// list rules of the module doc.
pub fn fill(plan: &Plan, order: &[u32], budget: usize, up_to: Tier) -> Selection {
    let mut sel = Selection {
        atoms: vec![false; plan.atoms.len()],
        containers: vec![false; plan.containers.len()],
        bytes: 0,
    };
    // Entries present per list container (always a prefix of the list).
    let mut present = vec![0u32; plan.containers.len()];
    let mut blocked: Option<Tier> = None;
    let mut chain: Vec<u32> = Vec::new();
    for &i in order {
        let a = &plan.atoms[i as usize];
        if a.key.tier > up_to || blocked.is_some_and(|b| a.key.tier > b) {
            break;
        }
        // The containers this atom would create, innermost first.
        chain.clear();
        let mut c = a.parent;
        let mut cost = a.bytes as usize;
        while c != ROOT && !sel.containers[c as usize] {
            chain.push(c);
            cost += plan.containers[c as usize].overhead as usize;
            c = plan.containers[c as usize].parent;
        }
        let entries = a.item_of.into_iter().chain(
            chain
                .iter()
                .filter_map(|&c| plan.containers[c as usize].item_of),
        );
        let mut in_order = true;
        for (list, index) in entries {
            in_order &= present[list as usize] == index;
        }
        if !in_order {
            // An earlier entry of one of its lists was cut: the tail goes too.
            continue;
        }
        if sel.bytes + cost > budget {
            blocked = Some(blocked.map_or(a.key.tier, |b| b.min(a.key.tier)));
            continue;
        }
        sel.bytes += cost;
        sel.atoms[i as usize] = true;
        if let Some((list, _)) = a.item_of {
            present[list as usize] += 1;
        }
        for &c in &chain {
            sel.containers[c as usize] = true;
            if let Some((list, _)) = plan.containers[c as usize].item_of {
                present[list as usize] += 1;
            }
        }
    }
    sel
}

/// A budget too small for the verdict and the headline.
#[derive(Debug, Clone, thiserror::Error)]
#[error(
    "a budget of {max} bytes cannot hold the verdict and the headline; the smallest budget that holds them is {need} bytes"
)]
pub struct TooSmall {
    pub max: usize,
    pub need: usize,
}

/// The largest selection whose rendering fits `max` bytes: `render` writes a selection (with
/// its notes of what was cut) and the fit is measured on what it wrote. Starts from the
/// budget less `reserve` (the wrapper around the content) and shrinks by each overshoot; when
/// the essentials (verdict, headline) alone do not fit, the error says how many bytes they
/// need.
pub fn fit(
    plan: &Plan,
    max: usize,
    reserve: usize,
    mut render: impl FnMut(&Selection) -> String,
) -> Result<String, TooSmall> {
    let order = plan.order();
    let essentials = fill(plan, &order, usize::MAX, Tier::Headline);
    let smallest = render(&essentials);
    if smallest.len() > max {
        return Err(TooSmall {
            max,
            need: smallest.len(),
        });
    }
    let mut target = max.saturating_sub(reserve);
    for _ in 0..12 {
        let sel = fill(plan, &order, target, Tier::List);
        if !sel.has_essentials(plan) {
            break;
        }
        let out = render(&sel);
        if out.len() <= max {
            return Ok(out);
        }
        // Overshot (the notes of what was cut grew, or the estimate was low): shrink by the
        // overshoot, at least a little, and try again.
        target = target.saturating_sub((out.len() - max).max(16));
    }
    Ok(smallest)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(tier: Tier, level: u32, seq: u32) -> SortKey {
        SortKey {
            tier,
            level,
            device: 0,
            group: 0,
            seq,
        }
    }

    /// A verdict atom (10 bytes), a summary atom (20), and a list of three 10-byte entries.
    fn plan() -> Plan {
        let list = Container {
            parent: ROOT,
            overhead: 4,
            item_of: None,
        };
        let mut atoms = vec![
            Atom {
                key: key(Tier::Verdict, 0, 0),
                bytes: 10,
                parent: ROOT,
                item_of: None,
            },
            Atom {
                key: key(Tier::Summary, 0, 1),
                bytes: 20,
                parent: ROOT,
                item_of: None,
            },
        ];
        for i in 0..3 {
            atoms.push(Atom {
                key: key(Tier::List, i, 2 + i),
                bytes: 10,
                parent: 0,
                item_of: Some((0, i)),
            });
        }
        Plan {
            containers: vec![list],
            atoms,
        }
    }

    #[test]
    fn tiers_fill_in_order_and_lists_keep_their_heads() {
        let p = plan();
        let o = p.order();
        // 10 + 20 + (4 + 10) + 10 = 54: two entries.
        let s = fill(&p, &o, 55, Tier::List);
        assert_eq!(s.atoms, [true, true, true, true, false]);
        assert_eq!(s.bytes, 54);
        // 25 bytes: the summary does not fit, so no list entry is kept either (although one
        // would fit).
        let s = fill(&p, &o, 25, Tier::List);
        assert_eq!(s.atoms, [true, false, false, false, false]);
        assert!(s.has_essentials(&p));
        let s = fill(&p, &o, 5, Tier::List);
        assert!(!s.has_essentials(&p));
    }

    #[test]
    fn fit_measures_the_rendering_and_names_the_smallest_budget() {
        let p = plan();
        // The rendering: one byte per kept byte plus a 10-byte wrapper.
        let render = |s: &Selection| "x".repeat(s.bytes + 10);
        assert_eq!(fit(&p, 64, 10, render).unwrap().len(), 64);
        // Without the reserve the first try overshoots and the second fits.
        assert!(fit(&p, 64, 0, render).unwrap().len() <= 64);
        let e = fit(&p, 19, 0, render).unwrap_err();
        assert_eq!((e.max, e.need), (19, 20));
        assert!(e.to_string().contains("20 bytes"), "{e}");
    }
}
