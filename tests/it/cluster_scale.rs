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
