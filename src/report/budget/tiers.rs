//! Which tier a JSON path belongs to, per tool: the few paths named by the priority order
//! (verdict, headline, top advice, per-rank shares, cross-rank claims; docs/json-output.md),
//! and the structural rule for everything else, so an analysis added later needs no change
//! here: a field outside any list is a summary, a field inside a list is a list entry. Lists of
//! devices, ranks and cohorts (an analysis that is an array, and arrays named `devices`,
//! `ranks` or `cohorts`) hold one summary per entry, so they count as no list.

use super::Tier;

/// One step of a JSON path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Seg<'a> {
    Key(&'a str),
    Index(usize),
}

use Seg::{Index, Key};

/// The advisor findings whose statement, time at stake and recommendation rank as top advice.
pub const TOP_FINDINGS: usize = 3;

/// The fields of a finding that are the advice (the rest is its evidence).
const ADVICE_FIELDS: &[&str] = &[
    "rule",
    "severity",
    "time_at_stake_ns",
    "statement",
    "recommendation",
];

/// A device_time row's shares, and the fields that say whose they are.
const SHARE_FIELDS: &[&str] = &[
    "window_ns",
    "computing_pct_of_window",
    "communication_not_overlapped_pct_of_window",
    "free_pct_of_window",
];

/// A cross-rank rank row's step shares.
const RANK_STEP_FIELDS: &[&str] = &[
    "steps",
    "step_mean_ns",
    "computing_pct",
    "communication_not_overlapped_pct",
    "free_pct",
];

/// Which rank a row is: the device reference's rank and device id (its file and process are
/// summary).
fn whose(rest: &[Seg]) -> bool {
    matches!(rest, [Key("device"), Key("rank" | "device_id")])
}

/// The tier the path of a scalar (or of an empty or tuple value) has in `tool`'s output, when
/// a named rule gives it one.
pub fn named(tool: &str, p: &[Seg]) -> Option<Tier> {
    match tool {
        "analyze" => analyze(p),
        "diff" => diff(p),
        "memory" => memory(p),
        _ => None,
    }
}

fn analyze(p: &[Seg]) -> Option<Tier> {
    match p {
        [Key("schema_version" | "tool" | "tool_version")] => Some(Tier::Verdict),
        [Key("verdict"), Key("coverage"), ..] => None,
        [Key("verdict"), ..] => Some(Tier::Verdict),
        [Key("headline"), ..] => Some(Tier::Headline),
        [Key("analyses"), rest @ ..] => in_analyses(rest),
        _ => None,
    }
}

fn in_analyses(p: &[Seg]) -> Option<Tier> {
    match p {
        [Key("advisor"), Key("findings"), Index(i), Key(f)]
            if *i < TOP_FINDINGS && ADVICE_FIELDS.contains(f) =>
        {
            Some(Tier::Advice)
        }
        [Key("device_time"), Index(_), Key(f)] if SHARE_FIELDS.contains(f) => {
            Some(Tier::RankShares)
        }
        [Key("device_time"), Index(_), rest @ ..] if whose(rest) => Some(Tier::RankShares),
        [Key("cross_rank"), Key("cohorts"), Index(_), rest @ ..] => cohort(rest),
        _ => None,
    }
}

/// The claims of a cross-rank cohort: who is slowest and who is waited for, with each rank's
/// step shares.
fn cohort(p: &[Seg]) -> Option<Tier> {
    match p {
        [Key("format" | "step_source" | "steps_compared")] => Some(Tier::CrossRank),
        [Key("slowest" | "waited_for"), ..] => Some(Tier::CrossRank),
        [Key("ranks"), Index(_), Key(f)] if RANK_STEP_FIELDS.contains(f) => Some(Tier::CrossRank),
        [Key("ranks"), Index(_), rest @ ..] if whose(rest) => Some(Tier::CrossRank),
        _ => None,
    }
}

/// `diff`: the gate and its one-line summary are the verdict, the per-run verdicts the
/// headline, the findings that appeared the advice.
fn diff(p: &[Seg]) -> Option<Tier> {
    match p {
        [Key("schema_version" | "gate" | "summary" | "failed" | "base" | "new" | "base_runs")] => {
            Some(Tier::Verdict)
        }
        [Key("verdicts"), ..] => Some(Tier::Headline),
        [Key("findings"), Key("appeared"), Index(i), ..] if *i < TOP_FINDINGS => Some(Tier::Advice),
        _ => None,
    }
}

/// `memory`: the attribution's status and what it misses are the verdict, its statements the
/// headline.
fn memory(p: &[Seg]) -> Option<Tier> {
    match p {
        [Key("schema_version" | "report")] => Some(Tier::Verdict),
        [
            Key("run"),
            Key("attribution"),
            Key("status" | "missing"),
            ..,
        ] => Some(Tier::Verdict),
        [Key("run"), Key("attribution"), Key("statements"), ..] => Some(Tier::Headline),
        _ => None,
    }
}

/// True for a list whose entries are devices, ranks or cohorts: `analyses.<name>` when it is an
/// array, and any array named `devices`, `ranks` or `cohorts` (of objects).
pub fn per_device(tool: &str, at: &[Seg]) -> bool {
    match at {
        [Key("analyses"), Key(_)] => tool == "analyze",
        [.., Key("devices" | "ranks" | "cohorts")] => true,
        _ => false,
    }
}

/// The top-level part a path belongs to, as a sort rank: the report's own small fields first,
/// then its summary, then the analyses in registry order (an unknown analysis after the known
/// ones), then the rest.
pub fn group(names: &[&str], tool: &str, p: &[Seg]) -> u32 {
    const FIRST: &[&str] = &[
        "inputs",
        "vendor_verdict",
        "phase_slice",
        "detail_capped",
        "summary",
    ];
    match p {
        [Key("analyses"), Key(name), ..] if tool == "analyze" => {
            100 + names.iter().position(|n| n == name).unwrap_or(names.len()) as u32
        }
        [Key(k), ..] => FIRST.iter().position(|f| f == k).map_or(1000, |i| i as u32),
        _ => 1000,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn named_paths_take_their_tiers_and_the_rest_is_structural() {
        let t = |p: &[Seg]| named("analyze", p);
        assert_eq!(t(&[Key("verdict"), Key("status")]), Some(Tier::Verdict));
        assert_eq!(t(&[Key("verdict"), Key("coverage"), Key("files")]), None);
        assert_eq!(t(&[Key("headline"), Index(7)]), Some(Tier::Headline));
        let finding = |i, f| {
            t(&[
                Key("analyses"),
                Key("advisor"),
                Key("findings"),
                Index(i),
                Key(f),
            ])
        };
        assert_eq!(finding(2, "recommendation"), Some(Tier::Advice));
        assert_eq!(finding(3, "recommendation"), None);
        assert_eq!(finding(0, "evidence"), None);
        assert_eq!(
            t(&[
                Key("analyses"),
                Key("device_time"),
                Index(9),
                Key("device"),
                Key("rank")
            ]),
            Some(Tier::RankShares)
        );
        assert_eq!(
            t(&[
                Key("analyses"),
                Key("cross_rank"),
                Key("cohorts"),
                Index(0),
                Key("slowest"),
                Key("statement")
            ]),
            Some(Tier::CrossRank)
        );
        assert_eq!(t(&[Key("analyses"), Key("layout"), Key("x")]), None);
        assert!(per_device("analyze", &[Key("analyses"), Key("layout")]));
        assert!(per_device(
            "analyze",
            &[Key("analyses"), Key("efficiency"), Key("devices")]
        ));
        assert!(!per_device(
            "analyze",
            &[Key("analyses"), Key("bubbles"), Index(0), Key("largest")]
        ));
    }
}
