//! Bounded JSON reports (`--detail capped`, the default, and `--detail full`) on a generated
//! one-rank root (profscope synth, trace_view.json) with more decode steps than the cap. The
//! expected step count and NOTIFY_WAIT total come from the generator's ground truth, not from the
//! code under test.

use crate::common;
use serde_json::Value;

fn analyze(dir: &std::path::Path, extra: &[&str]) -> Value {
    let mut args = vec![
        "analyze",
        dir.to_str().unwrap(),
        "--format",
        "json",
        "--quiet",
    ];
    args.extend_from_slice(extra);
    common::profscope_json(&args)
}

#[test]
fn step_lists_are_capped_by_default_and_totals_count_every_step() {
    let g = common::generated("detail", 1, 3_000_000, 11, false);
    let r = &g.truth.ranks[0];
    let steps = r.decode_steps as usize;
    assert!(
        steps > 100,
        "the generated root needs more than 100 decode steps: {steps}"
    );
    let notify: i64 = r.notify_wait_ns.iter().sum();

    let capped = analyze(&g.dir, &[]);
    let sync = &capped["analyses"]["step_sync"][0];
    assert_eq!(sync["steps"].as_array().unwrap().len(), 100);
    assert_eq!(sync["notify_wait_total_ns"].as_i64(), Some(notify));
    let bands: u64 = [
        "excellent_steps",
        "acceptable_steps",
        "needs_attention_steps",
    ]
    .iter()
    .map(|k| sync[k].as_u64().unwrap())
    .sum();
    assert_eq!(bands as usize, steps);
    let cut = capped["detail_capped"].as_array().unwrap();
    let sync_cut = cut
        .iter()
        .find(|c| c["list"] == "analyses.step_sync[0].steps")
        .expect("step_sync listed as cut");
    assert_eq!(
        (sync_cut["listed"].as_u64(), sync_cut["total"].as_u64()),
        (Some(100), Some(steps as u64))
    );
    // Every list named was cut to 100 and had more.
    for c in cut {
        assert_eq!(c["listed"], 100, "{c}");
        assert!(c["total"].as_u64().unwrap() > 100, "{c}");
    }

    let full = analyze(&g.dir, &["--detail", "full"]);
    assert!(full.get("detail_capped").is_none());
    let sync = &full["analyses"]["step_sync"][0];
    assert_eq!(sync["steps"].as_array().unwrap().len(), steps);
    let listed: i64 = sync["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["notify_wait_ns"].as_i64().unwrap())
        .sum();
    assert_eq!(listed, notify);
    // The capped listing is the full one's first 100 entries.
    assert_eq!(
        capped["analyses"]["step_sync"][0]["steps"],
        Value::Array(sync["steps"].as_array().unwrap()[..100].to_vec())
    );
}
