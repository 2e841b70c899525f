//! Files read together, not summed: a capture trace beside its replays (vLLM / SGLang
//! `capture_traces/`, an ACLGraph capture profiled apart) and an eager run of the same workload
//! are companions of the replay file of the same rank and process. The run's finish recognises
//! them from every file's [`GraphExtract`], matches the replay file's unmatched sequences to the
//! companions' captures (then eager steps), and rewrites its ops; the registry leaves the
//! companions out of every other analysis (docs/analyses/graph_mode.md).

use super::extract::{GraphExtract, Recorded, SeqMatch, Source, Strings, moved};
use super::matching::{Candidate, to_capture, to_eager};
use super::{GraphFile, GraphMode, ops};

/// What a companion is to the run.
pub const CAPTURE: &str = "capture_companion";
pub const EAGER: &str = "eager_map";

/// One companion file and the replay files it serves.
#[derive(Debug, Clone)]
pub struct Companion {
    pub file: String,
    pub rank: i32,
    pub role: &'static str,
    pub of: Vec<String>,
    /// How it was recognised, in words.
    pub why: String,
}

/// A replay file's sequences matched again with its companions.
pub struct Rematched {
    pub file: String,
    pub strings: Strings,
    pub matches: Vec<SeqMatch>,
}

/// The companions of a run and the replay files' new matches.
#[derive(Default)]
pub struct Resolution {
    pub companions: Vec<Companion>,
    pub rematched: Vec<Rematched>,
}

impl Resolution {
    /// The companion entry of `file`, if it is one.
    pub fn of(&self, file: &str) -> Option<&Companion> {
        self.companions.iter().find(|c| c.file == file)
    }
}

fn overlap(a: &[i64], b: &[i64]) -> bool {
    a.iter().any(|x| b.contains(x))
}

/// A capture trace: capture windows that recorded launches, and fewer graph launches than
/// captures (no replays of its own, or a warm-up replay or two).
fn is_capture_trace(x: &GraphExtract) -> bool {
    x.active && x.captured_launches > 0 && x.graph_launches < x.capture_windows
}

/// The replay files `c` serves: the same rank (or a rank one of them does not state) and a host
/// process in common; else the same stated rank.
fn served<'a>(
    c: &GraphExtract,
    replay: &[&'a GraphExtract],
) -> (Vec<&'a GraphExtract>, &'static str) {
    let others = replay.iter().copied().filter(|r| r.file != c.file);
    let same_pid: Vec<&GraphExtract> = others
        .clone()
        .filter(|r| r.rank == c.rank || r.rank < 0 || c.rank < 0)
        .filter(|r| overlap(&c.capture_pids, &r.replay_pids))
        .collect();
    if !same_pid.is_empty() {
        return (same_pid, "same rank and process");
    }
    let same_rank: Vec<&GraphExtract> =
        others.filter(|r| c.rank >= 0 && r.rank == c.rank).collect();
    (same_rank, "same rank, another process id")
}

/// Recognises the companions among `x` (`eager`: files given with `--eager-map`; `beside`:
/// eager candidates beside a replay file, companions only when their steps map something) and
/// matches the replay files' unmatched sequences to them.
pub fn resolve(x: &[&GraphExtract], eager: &[String], beside: &[String]) -> Resolution {
    let replay: Vec<&GraphExtract> = x.iter().copied().filter(|r| r.replays > 0).collect();
    let mut out = Resolution::default();
    for c in x.iter().filter(|c| is_capture_trace(c)) {
        let (of, why) = served(c, &replay);
        if !of.is_empty() {
            out.companions.push(Companion {
                file: c.file.clone(),
                rank: c.rank,
                role: CAPTURE,
                of: of.iter().map(|r| r.file.clone()).collect(),
                why: format!(
                    "a capture trace ({} capture windows, {} recorded launches, {} graph launches) beside the replays of the {why}",
                    c.capture_windows, c.captured_launches, c.graph_launches
                ),
            });
        }
    }
    let eager_for = |e: &GraphExtract| -> Vec<String> {
        let same: Vec<String> = replay
            .iter()
            .filter(|r| r.rank == e.rank && r.file != e.file)
            .map(|r| r.file.clone())
            .collect();
        if same.is_empty() {
            replay
                .iter()
                .filter(|r| r.file != e.file)
                .map(|r| r.file.clone())
                .collect()
        } else {
            same
        }
    };
    for e in x.iter().filter(|e| !e.active && eager.contains(&e.file)) {
        out.companions.push(Companion {
            file: e.file.clone(),
            rank: e.rank,
            role: EAGER,
            of: eager_for(e),
            why: "given with --eager-map".into(),
        });
    }
    let mut used_beside: Vec<(String, String)> = Vec::new();
    for r in replay.iter().filter(|r| !r.sequences.is_empty()) {
        let caps: Vec<&GraphExtract> = companions_of(x, &out, &r.file, CAPTURE);
        let mut eagers: Vec<&GraphExtract> = companions_of(x, &out, &r.file, EAGER);
        let candidates: Vec<&GraphExtract> = x
            .iter()
            .copied()
            .filter(|e| !e.active && beside.contains(&e.file) && e.rank == r.rank)
            .collect();
        eagers.extend(candidates.iter().copied());
        if caps.is_empty() && eagers.is_empty() {
            // Nothing beside it to match against: its own matches stand.
            continue;
        }
        let m = rematch(r, &caps, &eagers);

        for e in &candidates {
            if m.matches
                .iter()
                .any(|q| q.source == Source::EagerMap && q.from == e.file)
            {
                used_beside.push((e.file.clone(), r.file.clone()));
            }
        }
        out.rematched.push(m);
    }
    for (e, r) in used_beside {
        match out.companions.iter_mut().find(|c| c.file == e) {
            Some(c) => c.of.push(r),
            None => out.companions.push(Companion {
                rank: x.iter().find(|y| y.file == e).map_or(-1, |y| y.rank),
                file: e,
                role: EAGER,
                of: vec![r],
                why: "an eager run of the same rank beside the replays, whose steps map them"
                    .into(),
            }),
        }
    }
    out
}

fn companions_of<'a>(
    x: &[&'a GraphExtract],
    res: &Resolution,
    file: &str,
    role: &str,
) -> Vec<&'a GraphExtract> {
    res.companions
        .iter()
        .filter(|c| c.role == role && c.of.iter().any(|f| f == file))
        .filter_map(|c| x.iter().copied().find(|y| y.file == c.file))
        .collect()
}

/// `r`'s unmatched sequences matched to its capture companions, then to eager steps.
fn rematch(r: &GraphExtract, caps: &[&GraphExtract], eagers: &[&GraphExtract]) -> Rematched {
    let mut s = Strings::from_list(r.strings.clone());
    let moved_all =
        |from: &[&GraphExtract], s: &mut Strings, eager: bool| -> Vec<(String, Recorded)> {
            from.iter()
                .flat_map(|c| {
                    let list = if eager { &c.eager } else { &c.captures };
                    list.iter()
                        .map(|rec| (c.file.clone(), moved(rec, &c.strings, s)))
                        .collect::<Vec<_>>()
                })
                .collect()
        };
    let cap_recs = moved_all(caps, &mut s, false);
    let eager_recs = moved_all(eagers, &mut s, true);
    let (cap_cands, eager_cands) = (candidates(&cap_recs), candidates(&eager_recs));
    let matches = r
        .sequences
        .iter()
        .zip(&r.matches)
        .map(|(q, m)| {
            if m.source != Source::None {
                return m.clone();
            }
            let mut best = if cap_cands.is_empty() {
                m.clone()
            } else {
                to_capture(q, &cap_cands)
            };
            if best.source == Source::None && !eager_cands.is_empty() {
                let e = to_eager(q, &eager_cands);
                best = if e.source == Source::None {
                    SeqMatch {
                        note: join(&best.note, &e.note),
                        ..best
                    }
                } else {
                    e
                };
            }
            best
        })
        .collect();
    Rematched {
        file: r.file.clone(),
        strings: s,
        matches,
    }
}

fn candidates(v: &[(String, Recorded)]) -> Vec<Candidate<'_>> {
    v.iter()
        .map(|(file, rec)| Candidate {
            rec,
            file,
            own: false,
        })
        .collect()
}

fn join(a: &str, b: &str) -> String {
    match (a.is_empty(), b.is_empty()) {
        (true, _) => b.to_string(),
        (_, true) => a.to_string(),
        _ => format!("{a}; {b}"),
    }
}

/// Writes the resolution into the run's graph mode: companions' roles and the files they serve,
/// the replay files' ops from the new matches (`x`: the extracts the resolution came from), and
/// a row for each eager map (which has no graph activity of its own).
pub fn apply(gm: &mut GraphMode, x: &[&GraphExtract], res: &Resolution, top_n: usize) {
    for m in &res.rematched {
        let (Some(g), Some(r)) = (
            gm.files.iter_mut().find(|g| g.file == m.file),
            x.iter().find(|y| y.file == m.file),
        ) else {
            continue;
        };
        let before = g.ops_in_graphs.source.clone();
        g.ops_in_graphs = ops::ops_in_graphs(&r.sequences, &m.matches, &m.strings, top_n);
        if g.ops_in_graphs.source != "kernel_name" && before == "kernel_name" {
            g.caveats
                .retain(|c| !c.starts_with("no capture of the replayed graphs"));
        }
    }
    for c in &res.companions {
        for r in &c.of {
            if let Some(g) = gm.files.iter_mut().find(|g| &g.file == r)
                && !g.companions.contains(&c.file)
            {
                g.companions.push(c.file.clone());
                g.caveats.push(format!(
                    "{} ({}) read beside this file for its ops, not summed with it",
                    c.file,
                    c.role.replace('_', " ")
                ));
            }
        }
        let g = match gm.files.iter_mut().position(|g| g.file == c.file) {
            Some(k) => &mut gm.files[k],
            None => {
                gm.files.push(GraphFile {
                    file: c.file.clone(),
                    rank: c.rank,
                    attribution: "none".into(),
                    step_source: "none".into(),
                    ..GraphFile::default()
                });
                gm.files.last_mut().expect("just pushed")
            }
        };
        g.role = c.role.into();
        g.companions = c.of.clone();
        g.caveats.retain(|v| !v.starts_with("a capture trace:"));
        g.caveats.push(format!(
            "a companion ({}) of {}: read for the ops of their replays, left out of device time, bubbles, causes, the advisor and the verdict",
            c.why,
            if c.of.is_empty() { "no replay file".to_string() } else { c.of.join(", ") }
        ));
    }
}

/// Indexes of the files (one extract per file, None for a file that failed or ran without graph
/// mode) that may be an eager run of a replay file: no graph activity, device events, and the
/// rank of a replay file whose sequences its own captures left unmatched (both ranks unknown
/// only when the run is that pair).
pub fn eager_candidates(x: &[Option<&GraphExtract>]) -> Vec<usize> {
    let wanting: Vec<i32> = x
        .iter()
        .flatten()
        .filter(|r| r.active && r.replays > 0 && !r.sequences.is_empty())
        .map(|r| r.rank)
        .collect();
    x.iter()
        .enumerate()
        .filter_map(|(k, e)| {
            let e = (*e)?;
            let fits = !e.active
                && e.device_events > 0
                && wanting
                    .iter()
                    .any(|&r| r == e.rank && (r >= 0 || x.len() == 2));
            fits.then_some(k)
        })
        .collect()
}

/// One `graph_companion` diagnostic per companion file: which file it was taken as the
/// companion of, and why.
pub fn diagnostics(c: &[crate::contract::ranks::CompanionFile]) -> crate::diag::Diagnostics {
    let mut d = crate::diag::Diagnostics::default();
    for c in c {
        d.add("graph_companion", crate::diag::Severity::Info, || {
            format!(
                "{}: taken as the {} of {} ({}): read for the ops inside their graph replays, left out of device time, bubbles, causes, the advisor's time at stake and the verdict's shares",
                c.file,
                c.role.replace('_', " "),
                if c.of.is_empty() { "no replay file".to_string() } else { c.of.join(", ") },
                c.why
            )
        });
    }
    d
}

#[cfg(test)]
mod tests {
    use super::*;

    fn capture(file: &str, rank: i32, pid: i64, windows: u64, launches: u64) -> GraphExtract {
        GraphExtract {
            file: file.into(),
            rank,
            active: true,
            capture_pids: vec![pid],
            capture_windows: windows,
            captured_launches: 40 * windows,
            graph_launches: launches,
            ..GraphExtract::default()
        }
    }

    fn replays(file: &str, rank: i32, pid: i64) -> GraphExtract {
        GraphExtract {
            file: file.into(),
            rank,
            active: true,
            replay_pids: vec![pid],
            graph_launches: 100,
            replays: 100,
            ..GraphExtract::default()
        }
    }

    fn served_by(c: GraphExtract, r: GraphExtract) -> Vec<String> {
        let res = resolve(&[&c, &r], &[], &[]);
        res.of(&c.file).map(|x| x.of.clone()).unwrap_or_default()
    }

    #[test]
    fn a_capture_trace_serves_the_replays_of_its_rank_and_process() {
        let r = || replays("serve.json", 0, 5);
        assert_eq!(
            served_by(capture("cap.json", 0, 5, 3, 0), r()),
            ["serve.json"]
        );
        // A rank the capture trace does not state: the process decides.
        assert_eq!(
            served_by(capture("cap.json", -1, 5, 3, 0), r()),
            ["serve.json"]
        );
        assert!(served_by(capture("cap.json", -1, 6, 3, 0), r()).is_empty());
        // The same stated rank in another process still serves; another rank never does.
        assert_eq!(
            served_by(capture("cap.json", 0, 6, 3, 0), r()),
            ["serve.json"]
        );
        assert!(served_by(capture("cap.json", 1, 5, 3, 0), r()).is_empty());
        // As many replays as captures: a file of its own (xDiT), not a companion.
        assert!(served_by(capture("cap.json", 0, 5, 3, 3), r()).is_empty());
        let why = resolve(&[&capture("c", 0, 6, 1, 0), &r()], &[], &[]).companions[0]
            .why
            .clone();
        assert!(
            why.ends_with("of the same rank, another process id"),
            "{why}"
        );
    }

    #[test]
    fn eager_candidates_are_quiet_files_of_a_rank_with_unmatched_replays() {
        let mut r = replays("serve.json", 0, 5);
        r.sequences.push(Default::default());
        let quiet = |file: &str, rank: i32, device_events: u64| GraphExtract {
            file: file.into(),
            rank,
            device_events,
            ..GraphExtract::default()
        };
        let (a, b, c) = (quiet("e0", 0, 10), quiet("e1", 1, 10), quiet("cpu", 0, 0));
        assert_eq!(
            eager_candidates(&[Some(&r), Some(&a), Some(&b), Some(&c), None]),
            [1]
        );
        let done = replays("serve.json", 0, 5);
        assert!(eager_candidates(&[Some(&done), Some(&a)]).is_empty());
    }
}
