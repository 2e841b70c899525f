//! Bounded reports at any rank count (issue 43): generated roots (`synth`, the project's
//! generator; 64 and 1,024 ranks of about 40 KB each), the default report against
//! `--detail full` of the same root. Expected values are computed here from the full report's
//! every-rank rows (numpy's linear-interpolation quantile), not taken from the capped one.

use crate::common;
use serde_json::Value;
use std::path::Path;

fn analyze(path: &Path, full: bool) -> (Value, usize) {
    let mut args = vec!["analyze", "--quiet", "--no-cache", "--format", "json"];
    if full {
        args.extend(["--detail", "full"]);
    }
    args.push(path.to_str().unwrap());
    let v = common::profscope_json(&args);
    let bytes = serde_json::to_string_pretty(&v).unwrap().len();
    (v, bytes)
}

fn quantile(sorted: &[f64], q: f64) -> f64 {
    let pos = q * (sorted.len() - 1) as f64;
    let (lo, hi) = (pos.floor() as usize, pos.ceil() as usize);
    sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo as f64)
}

#[test]
fn per_device_lists_name_the_ranks_that_matter_and_distributions_keep_all() {
    let g = common::generated("cluster64", 64, 40_000, 7, false);
    let (capped, _) = analyze(&g.dir, false);
    let (full, _) = analyze(&g.dir, true);
    let cf = &full["analyses"]["cross_rank"]["cohorts"][0];
    let cc = &capped["analyses"]["cross_rank"]["cohorts"][0];
    assert_eq!(cf["ranks"].as_array().unwrap().len(), 64);
    assert_eq!(cc["ranks"].as_array().unwrap().len(), 16);
    assert_eq!(
        full["analyses"]["device_time"].as_array().unwrap().len(),
        64
    );
    assert_eq!(
        capped["analyses"]["device_time"].as_array().unwrap().len(),
        16
    );
    // Every list cut is named with its length.
    let cut: Vec<(&str, u64, u64)> = capped["detail_capped"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["list"].as_str().unwrap(),
                c["listed"].as_u64().unwrap(),
                c["total"].as_u64().unwrap(),
            )
        })
        .collect();
    for list in ["analyses.device_time", "analyses.bubbles", "summary.files"] {
        assert!(cut.contains(&(list, 16, 64)), "{list}: {cut:?}");
    }
    // The lowest rank and the slowest rank by mean step are among those listed.
    let listed: Vec<i64> = cc["ranks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["device"]["rank"].as_i64().unwrap())
        .collect();
    let rows = cf["ranks"].as_array().unwrap();
    let slowest = rows
        .iter()
        .max_by(|a, b| {
            a["step_mean_ns"]
                .as_f64()
                .unwrap()
                .total_cmp(&b["step_mean_ns"].as_f64().unwrap())
        })
        .unwrap()["device"]["rank"]
        .as_i64()
        .unwrap();
    assert!(
        listed.contains(&0) && listed.contains(&slowest),
        "{listed:?}"
    );
    // The distribution counts every rank, in both reports, equal to the full rows' quantiles.
    let mut means: Vec<f64> = rows
        .iter()
        .map(|r| r["step_mean_ns"].as_f64().unwrap())
        .collect();
    means.sort_by(f64::total_cmp);
    let d = &cc["distribution"];
    assert_eq!(d["ranks"], 64);
    assert_eq!(d["step_mean_ns_by_rank"].as_array().unwrap().len(), 64);
    assert_eq!(
        d["step_mean_ns"]["p50"].as_f64().unwrap(),
        quantile(&means, 0.5)
    );
    assert_eq!(
        d["step_mean_ns"]["p90"].as_f64().unwrap(),
        quantile(&means, 0.9)
    );
    assert_eq!(d["step_mean_ns"]["max"].as_f64().unwrap(), means[63]);
    assert_eq!(cc["distribution"], cf["distribution"]);
    // Totals and the headline do not depend on the listing.
    assert_eq!(capped["headline"], full["headline"]);
    assert_eq!(capped["verdict"], full["verdict"]);
}

#[test]
fn a_thousand_ranks_report_under_two_megabytes() {
    let g = common::generated("cluster1024", 1024, 40_000, 11, false);
    let (capped, bytes) = analyze(&g.dir, false);
    assert!(bytes < 2_000_000, "{bytes} bytes");
    assert_eq!(
        capped["analyses"]["cross_rank"]["cohorts"][0]["distribution"]["ranks"],
        1024
    );
    assert_eq!(capped["summary"]["files"].as_array().unwrap().len(), 16);
    assert_eq!(
        capped["analyses"]["ranks"]["present"]
            .as_array()
            .unwrap()
            .len(),
        1024
    );
}

/// Issue 56: a 1,024-rank table report reads like a 2-rank one (at most 1.5x its lines) and lists
/// the outliers, not the first ranks by id. Generated jobs (`synth --pp 8 --dp 128`, rank 517
/// slowed to 150%: stage 4, replica 5) against a TP1 x PP1 x DP2 job of the same shape.
#[test]
fn a_thousand_rank_table_is_short_and_names_the_outliers() {
    let root = std::env::temp_dir().join(format!("profscope-scale-job-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    let make = |dir: &str, args: &[&str]| {
        let path = root.join(dir);
        let mut cmd = common::profscope_command();
        cmd.args([
            "synth",
            path.to_str().unwrap(),
            "--steps",
            "2",
            "--microbatches",
            "1",
        ]);
        let out = cmd.args(args).output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        path
    };
    let small = make("two", &["--pp", "1", "--dp", "2"]);
    let big = make("big", &["--pp", "8", "--dp", "128", "--slow-rank", "517"]);
    let table = |p: &Path| {
        let out = common::profscope_command()
            .args(["analyze", "--quiet", p.to_str().unwrap()])
            .output()
            .unwrap();
        assert!(out.status.success());
        String::from_utf8(out.stdout).unwrap()
    };
    let (two, many) = (table(&small), table(&big));
    let (l2, l1024) = (two.lines().count(), many.lines().count());
    assert!(
        l1024 as f64 <= 1.5 * l2 as f64,
        "{l1024} lines against {l2} for 2 ranks"
    );
    // The slow replica is named in the headline, against its stage's replicas.
    let headline: Vec<&str> = many.lines().filter(|l| l.starts_with('»')).collect();
    assert!(
        headline
            .iter()
            .any(|h| h.contains("stage 4") && h.contains("rank 517 is the slowest")),
        "{headline:?}"
    );
    // Per-device sections list it (it computes the most), not ranks 0-15.
    assert!(
        many.contains("Compute-stream composition: rank 517"),
        "composition section"
    );
    let listed_low = (1..16)
        .filter(|r| many.contains(&format!("Bubbles: rank {r} ")))
        .count();
    assert!(listed_low <= 1, "{listed_low} of ranks 1-15 listed by id");
    let _ = std::fs::remove_dir_all(&root);
}
