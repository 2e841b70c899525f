//! The Markdown brief (`analyze --format md`, a PR comment): the report's sections filled into a
//! byte budget by the one trimmer of bounded outputs (`report::budget`), in its priority order:
//! the title and the verdict (its reasons and statement), the headline, the advisor's top
//! findings with their recommendation and time at stake, the device-time rows, the cross-rank
//! section, then every section's notes, then table rows, row k of every table before row k + 1
//! of any. A table cut says how many rows it kept; sections left out whole are named on the last
//! line, with the flag that shows them (`--full`).

use super::sections::{Section, build};
use crate::report::Report;
use crate::report::budget::{
    self, Atom, Container, Plan, ROOT, Selection, SortKey, Tier, TooSmall,
};

/// The brief's budget when none is given, bytes: the verdict, the headline, the top advice and
/// the per-rank tables of a few ranks, with room for the rest's summaries.
pub const DEFAULT_BRIEF_BYTES: usize = 8000;

/// The tiers of one section's rows and notes, by its title.
fn tiers(s: &Section) -> (Tier, Tier) {
    let t = s.title.as_str();
    if t.starts_with("Verdict") {
        (Tier::Verdict, Tier::Summary)
    } else if t.starts_with("Device time") {
        (Tier::RankShares, Tier::Summary)
    } else if t.starts_with("Cross-rank steps") {
        (Tier::CrossRank, Tier::CrossRank)
    } else {
        (Tier::List, Tier::Summary)
    }
}

/// A section in the plan: its container and atoms.
struct Part {
    section: Section,
    container: u32,
    rows: Vec<u32>,
    notes: Vec<u32>,
}

/// The brief cut into atoms: the head (title, inputs, phase: one atom), the headline lines, the
/// sections.
struct Brief {
    plan: Plan,
    /// The title and the context lines (inputs, phase): one atom.
    head: (u32, String, String),
    headline: Vec<(u32, String)>,
    parts: Vec<Part>,
}

fn key(tier: Tier, level: usize, group: usize, seq: &mut u32) -> SortKey {
    *seq += 1;
    SortKey {
        tier,
        level: level as u32,
        device: 0,
        group: group as u32,
        seq: *seq,
    }
}

fn atom(
    plan: &mut Plan,
    key: SortKey,
    text: &str,
    parent: u32,
    item_of: Option<(u32, u32)>,
) -> u32 {
    plan.atoms.push(Atom {
        key,
        bytes: text.len() as u32,
        parent,
        item_of,
    });
    (plan.atoms.len() - 1) as u32
}

fn table_head(s: &Section) -> String {
    format!(
        "| {} |\n|{}\n",
        s.header.join(" | "),
        "---|".repeat(s.header.len())
    )
}

/// The advisor's notes as blocks of one finding each (`k. rule: recommendation`, then its
/// indented lines); the tier of each note: the top findings' recommendation and time at stake
/// are advice, their evidence and the other findings' notes list entries, the rest summary.
fn advisor_note_tiers(notes: &[String]) -> Vec<(Tier, usize)> {
    let mut finding: Option<usize> = None;
    notes
        .iter()
        .map(|n| {
            let numbered = n
                .split_once(". ")
                .and_then(|(k, _)| k.parse::<usize>().ok());
            if let Some(k) = numbered {
                finding = Some(k - 1);
            } else if !n.starts_with(' ') {
                finding = None;
            }
            match finding {
                Some(k) if k < budget::TOP_FINDINGS && !n.trim_start().starts_with("evidence") => {
                    (Tier::Advice, k)
                }
                Some(k) => (Tier::List, k),
                None => (Tier::Summary, 0),
            }
        })
        .collect()
}

fn plan(r: &Report) -> Brief {
    let mut p = Plan::default();
    let mut seq = 0u32;
    let (title, context) = (super::markdown::title(r), super::markdown::context(r));
    let h = atom(
        &mut p,
        key(Tier::Verdict, 0, 0, &mut seq),
        &(title.clone() + &context),
        ROOT,
        None,
    );
    let headline: Vec<(u32, String)> = r
        .headline
        .iter()
        .map(|l| {
            let t = format!("- **{}**\n", super::markdown::cell(l));
            (
                atom(&mut p, key(Tier::Headline, 0, 0, &mut seq), &t, ROOT, None),
                t,
            )
        })
        .collect();
    let mut parts = Vec::new();
    for (g, s) in build(r).into_iter().enumerate() {
        let c = p.containers.len() as u32;
        p.containers.push(Container {
            parent: ROOT,
            overhead: (s.title.len() + table_head(&s).len() + 48) as u32,
            item_of: None,
        });
        let advisor = s.title.starts_with("Advisor");
        let (row_tier, note_tier) = tiers(&s);
        let rows = (0..s.rows.len())
            .map(|k| {
                let tier = match row_tier {
                    Tier::List if advisor && k < budget::TOP_FINDINGS => Tier::Advice,
                    t => t,
                };
                let text = row(&s.rows[k]);
                atom(
                    &mut p,
                    key(tier, k, g, &mut seq),
                    &text,
                    c,
                    Some((c, k as u32)),
                )
            })
            .collect();
        let mut note_tiers = if advisor {
            advisor_note_tiers(&s.notes)
        } else {
            vec![(note_tier, 0); s.notes.len()]
        };
        if row_tier == Tier::Verdict {
            // The verdict's statement (its first note) is the verdict; its coverage a summary.
            if let Some(t) = note_tiers.first_mut() {
                *t = (Tier::Verdict, 0);
            }
        }
        let notes = s
            .notes
            .iter()
            .zip(note_tiers)
            .map(|(n, (t, level))| {
                let text = format!("{}\n\n", super::markdown::cell(n));
                atom(&mut p, key(t, level, g, &mut seq), &text, c, None)
            })
            .collect();
        parts.push(Part {
            section: s,
            container: c,
            rows,
            notes,
        });
    }
    Brief {
        plan: p,
        head: (h, title, context),
        headline,
        parts,
    }
}

fn row(cells: &[String]) -> String {
    format!(
        "| {} |\n",
        cells
            .iter()
            .map(|c| super::markdown::cell(c))
            .collect::<Vec<_>>()
            .join(" | ")
    )
}

/// The brief as `sel` keeps it.
fn write(b: &Brief, sel: &Selection) -> String {
    let mut o = String::new();
    o.push_str(&b.head.1);
    for (a, t) in &b.headline {
        if sel.atoms[*a as usize] {
            o.push_str(t);
        }
    }
    o.push('\n');
    o.push_str(&b.head.2);
    let mut left = Vec::new();
    for p in &b.parts {
        if !sel.containers[p.container as usize] {
            left.push(p.section.title.as_str());
            continue;
        }
        let s = &p.section;
        o.push_str(&format!("## {}\n\n", s.title));
        let kept: Vec<usize> = (0..s.rows.len())
            .filter(|&k| sel.atoms[p.rows[k] as usize])
            .collect();
        if !kept.is_empty() {
            o.push_str(&table_head(s));
            for &k in &kept {
                o.push_str(&row(&s.rows[k]));
            }
            o.push('\n');
        }
        if kept.is_empty() && !s.rows.is_empty() {
            o.push_str(&format!("{} rows with `--full`\n\n", s.rows.len()));
        } else if kept.len() < s.rows.len() {
            o.push_str(&format!(
                "{} of {} rows; `--full` lists all\n\n",
                kept.len(),
                s.rows.len()
            ));
        }
        for (k, n) in s.notes.iter().enumerate() {
            if sel.atoms[p.notes[k] as usize] {
                o.push_str(&format!("{}\n\n", super::markdown::cell(n)));
            }
        }
    }
    if !left.is_empty() {
        o.push_str(&more_sections(&left));
    }
    o
}

/// `5 more sections with --full: Bubbles ×2, Dispatch ×2, Files.` (per-device sections once,
/// with their count).
fn more_sections(left: &[&str]) -> String {
    let mut kinds: Vec<(String, usize)> = Vec::new();
    for title in left {
        let stem = title.split([':', '(']).next().unwrap_or(title).trim();
        match kinds.iter_mut().find(|k| k.0 == stem) {
            Some(k) => k.1 += 1,
            None => kinds.push((stem.to_string(), 1)),
        }
    }
    let kinds: Vec<String> = kinds
        .into_iter()
        .map(|(k, n)| if n > 1 { format!("{k} ×{n}") } else { k })
        .collect();
    format!(
        "{} more sections with `--full`: {}.\n",
        left.len(),
        kinds.join(", ")
    )
}

/// The brief within `max` bytes of the text printed (after `for_people`); with `None`, within
/// [`DEFAULT_BRIEF_BYTES`] or, when the verdict and the headline alone are longer, those.
pub fn render(r: &Report, max: Option<usize>) -> Result<String, TooSmall> {
    let b = plan(r);
    let out = |sel: &Selection| super::for_people(write(&b, sel));
    let all = out(&b.plan.all());
    let limit = max.unwrap_or(DEFAULT_BRIEF_BYTES);
    if all.len() <= limit {
        return Ok(all);
    }
    match budget::fit(&b.plan, limit, 0, out) {
        Err(e) if max.is_none() => budget::fit(&b.plan, e.need, 0, out),
        x => x,
    }
}
