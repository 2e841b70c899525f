//! The efficiency analysis (issue 59) on the real shared captures, against an independent
//! computation: tests/tools/efficiency_oracle.py recomputes the FLOPs and times of the matmul and
//! conv families from the files themselves (sqlite3 over COMPUTE_TASK_INFO ⋈ TASK, csv over
//! kernel_details.csv with the trace_view.json durations of a text export, json over Kineto
//! traces: GEMM ops by Input Dims, kernels by correlation, outermost GEMM per launch), not through
//! profscope. FLOPs must agree exactly, time to the ns, calls exactly. The numbers it printed on
//! 2026-12-06 are in docs/analyses/efficiency.md ("Checked independently").
//!
//! Inputs are real unless said: the chip-facts test adds a generated `PROF_*/device_0/info.json.0`
//! (ai_core_num 24, aic_frequency 1800) to a copy of a real root, since no shared torch_npu root
//! kept its PROF folder.

use crate::common::{copy_dir, profscope_json, samples_dir};
use serde_json::Value;
use std::io::Write;
use std::process::Command;

/// A fresh folder under the temp dir for this test.
fn tmp(tag: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("profscope-eff-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn oracle(kind: &str, path: &std::path::Path) -> Option<Value> {
    let out = Command::new("python3")
        .args(["tests/tools/efficiency_oracle.py", kind])
        .arg(path)
        .output()
        .ok()?;
    assert!(
        out.status.success(),
        "oracle: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    Some(serde_json::from_slice(&out.stdout).unwrap())
}

fn efficiency(args: &[&str]) -> Vec<Value> {
    let mut a = vec![
        "analyze",
        "--format",
        "json",
        "--quiet",
        "--only",
        "efficiency",
    ];
    a.extend_from_slice(args);
    let r = profscope_json(&a);
    r["analyses"]["efficiency"].as_array().unwrap().clone()
}

/// A device entry's family row `name`.
fn family<'a>(d: &'a Value, name: &str) -> &'a Value {
    d["families"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["family"] == name)
        .unwrap_or_else(|| panic!("no family {name}: {}", d["families"]))
}

fn assert_agrees(d: &Value, want: &Value, what: &str) {
    let want = want.as_object().unwrap();
    assert!(!want.is_empty(), "{what}: the oracle found nothing");
    for (fam, w) in want {
        let f = family(d, fam);
        for k in ["calls", "flops", "time_ns"] {
            assert_eq!(f[k], w[k], "{what} {fam} {k}");
        }
    }
}

fn skipped() -> bool {
    if Command::new("python3").arg("--version").output().is_err() {
        let _ = writeln!(std::io::stderr(), "SKIPPED efficiency oracle: no python3");
        return true;
    }
    false
}

#[test]
fn ascend_flops_and_time_agree_with_the_oracle_on_db_text_and_csv() {
    if skipped() {
        return;
    }
    let s = samples_dir().join("ascend-pt");
    for r in 0..2 {
        let db = s.join(format!(
            "db/level1/rank{r}_ascend_pt/ASCEND_PROFILER_OUTPUT/ascend_pytorch_profiler_{r}.db"
        ));
        let d = &efficiency(&[db.to_str().unwrap()])[0];
        assert_eq!(d["status"], "estimated");
        assert_agrees(d, &oracle("db", &db).unwrap(), &format!("db rank {r}"));
        // The text export: trace_view.json tasks with kernel_details.csv's details linked.
        let rank = s.join(format!("text/level1/rank{r}_ascend_pt"));
        let csv = rank.join("ASCEND_PROFILER_OUTPUT/kernel_details.csv");
        let d = &efficiency(&[rank.to_str().unwrap()])[0];
        assert_agrees(d, &oracle("text", &csv).unwrap(), &format!("text rank {r}"));
        // The CSV alone (a CSV-only export): its own durations.
        let only = tmp(&format!("csv{r}")).join("kernel_details.csv");
        std::fs::copy(&csv, &only).unwrap();
        let d = &efficiency(&[only.to_str().unwrap()])[0];
        assert_agrees(d, &oracle("csv", &only).unwrap(), &format!("csv rank {r}"));
    }
}

#[test]
fn kineto_gemm_flops_and_time_agree_with_the_oracle() {
    if skipped() {
        return;
    }
    let t = samples_dir().join("torch-traces");
    for (f, row) in [
        ("trace_diff/control/control.json.gz", "NVIDIA A100 SXM 40GB"),
        (
            "negative_queue_length_values_check/rank0.json.gz",
            "NVIDIA A100 SXM 80GB",
        ),
        (
            "amd_trace/mi250_minitoy_train_ROCm6_2_kineto.json.gz",
            "AMD Instinct MI250 (one GCD)",
        ),
    ] {
        let path = t.join(f);
        let devs = efficiency(&[path.to_str().unwrap()]);
        let want = oracle("kineto", &path).unwrap();
        let d = devs
            .iter()
            .find(|d| {
                d["families"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .any(|x| x["family"] == "matmul")
            })
            .unwrap_or_else(|| panic!("{f}: no device with GEMMs"));
        // The oracle charges every kernel of a GEMM op to it, whatever its dtype: compare the
        // matmul rows of all dtypes (fp32 and tf32 ones) together.
        let f32_and_tf32 = family(d, "matmul");
        for k in ["calls", "flops", "time_ns"] {
            assert_eq!(f32_and_tf32[k], want["matmul"][k], "{f} {k}");
        }
        assert_eq!(d["peaks"]["table_row"], row, "{f}");
        assert_eq!(d["peaks"]["source"], "table");
    }
}

#[test]
fn fp32_gemms_on_tf32_kernels_are_charged_to_the_tf32_peak() {
    // control.json.gz: A100 fp32 GEMMs run by `cutlass_80_tensorop_s1688gemm…` kernels.
    let path = samples_dir().join("torch-traces/trace_diff/control/control.json.gz");
    let devs = efficiency(&[path.to_str().unwrap()]);
    let ops: Vec<&Value> = devs
        .iter()
        .flat_map(|d| d["ops"].as_array().unwrap())
        .filter(|o| o["family"] == "matmul")
        .collect();
    assert!(ops.iter().any(|o| o["dtype"] == "tf32"));
    for o in ops.iter().filter(|o| o["dtype"] == "tf32") {
        let want = o["flops"].as_f64().unwrap() / o["time_ns"].as_f64().unwrap() / 1e3 / 156.0;
        assert!(
            (o["mfu"].as_f64().unwrap() - want).abs() < 1e-9 * want.max(1.0),
            "{o}"
        );
    }
}

#[test]
fn without_chip_facts_peaks_are_not_estimated_and_nothing_is_guessed() {
    let root = samples_dir().join("ascend-pt/db/level1");
    for d in efficiency(&[root.to_str().unwrap()]) {
        let p = &d["peaks"];
        assert_eq!(p["chip"], "Ascend910B");
        assert_eq!(p["source"], "none");
        assert_eq!(p["clock_mhz"], 1800.0); // AICORE_FREQ's samples (sqlite3: all 1800)
        assert!(p["tflops"].as_array().unwrap().is_empty());
        assert!(
            p["not_estimated"][0]
                .as_str()
                .unwrap()
                .contains("no AI core count")
        );
        for o in d["ops"].as_array().unwrap() {
            assert!(o["mfu"].is_null() && o["time_lost_ns"].is_null(), "{o}");
            assert_eq!(o["roofline"], "unknown");
        }
    }
}

#[test]
fn info_json_gives_the_ascend_peak_and_overrides_give_mfu_and_time_lost() {
    let rank = tmp("info").join("rank0_ascend_pt");
    copy_dir(
        &samples_dir().join("ascend-pt/db/level1/rank0_ascend_pt"),
        &rank,
    );
    // Generated: what a torch_npu root keeps when the export is not simplified.
    let dev = rank.join("PROF_000001_20250109_ABCDEF/device_0");
    std::fs::create_dir_all(&dev).unwrap();
    std::fs::write(
        dev.join("info.json.0"),
        r#"{"DeviceInfo": [{"id": 0, "ai_core_num": 24, "aic_frequency": "1800"}]}"#,
    )
    .unwrap();
    let d = &efficiency(&[rank.to_str().unwrap()])[0];
    let p = &d["peaks"];
    assert_eq!(
        (p["source"].as_str(), p["ai_cores"].as_i64()),
        (Some("capture"), Some(24))
    );
    // 24 cores × 1800 MHz × 16·16·16·2 FLOPs per cycle = 353.8944 TFLOPS (fp16, bf16), ×2 int8.
    let tf: Vec<(&str, f64)> = p["tflops"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| (x["dtype"].as_str().unwrap(), x["tflops"].as_f64().unwrap()))
        .collect();
    assert_eq!(
        tf,
        [("fp16", 353.8944), ("bf16", 353.8944), ("int8", 707.7888)]
    );
    // The ops are FLOAT: no per-cycle figure, so still no MFU.
    assert!(p["not_estimated"][0].as_str().unwrap().starts_with("fp32"));

    // With both peaks given, Conv2D1 (AlexNet conv1, 1 task): FLOPs 2·32·55·55·(121·4·16·8),
    // bytes (32·1·224·224·8 + 121·4·16·8 + 64 + 32·8·55·55·8) · 4, time 314,667 ns (TASK).
    let root = samples_dir().join("ascend-pt/db/level1/rank0_ascend_pt");
    let d = &efficiency(&[
        root.to_str().unwrap(),
        "--peak-tflops",
        "300",
        "--peak-gbps",
        "1600",
    ])[0];
    let flops = 2.0 * 32.0 * 55.0 * 55.0 * (121.0 * 4.0 * 16.0 * 8.0);
    let bytes = (32 * 224 * 224 * 8 + 121 * 4 * 16 * 8 + 64 + 32 * 8 * 55 * 55 * 8) as f64 * 4.0;
    let t = 314_667.0;
    let conv1 = d["ops"]
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["op"] == "Conv2D" && o["shape"].as_str().unwrap().contains("121,4,16,8"))
        .unwrap();
    assert_eq!(conv1["flops"].as_f64(), Some(flops));
    assert_eq!(conv1["bytes"].as_f64(), Some(bytes));
    assert_eq!(conv1["time_ns"].as_f64(), Some(t));
    let mfu = flops / t / 1e3 / 300.0;
    assert!((conv1["mfu"].as_f64().unwrap() - mfu).abs() < 1e-12);
    // Intensity 157 < ridge 300e3 / 1600 = 187.5: memory-bound; ideal = bytes / 1600 B/ns.
    assert_eq!(conv1["roofline"], "memory");
    let lost = (t - bytes / 1600.0).round();
    assert_eq!(conv1["time_lost_ns"].as_f64(), Some(lost));
    assert_eq!(d["peaks"]["source"], "override");
}

#[test]
fn advisor_headline_and_html_carry_the_efficiency() {
    let root = samples_dir().join("ascend-pt/db/level1");
    let r = profscope_json(&[
        "analyze",
        "--format",
        "json",
        "--quiet",
        root.to_str().unwrap(),
        "--peak-tflops",
        "300",
        "--peak-gbps",
        "1600",
    ]);
    let devs = r["analyses"]["efficiency"].as_array().unwrap();
    // The time at stake is over every op class of the worst device (its `total` row); the
    // listed op rows (the first 100 by time lost) add up to at most that, and to all of it when
    // every class is listed.
    let listed = |d: &Value| -> i64 {
        d["ops"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|o| o["time_lost_ns"].as_i64())
            .filter(|&l| l > 0)
            .sum()
    };
    let total = |d: &Value| d["total"]["time_lost_ns"].as_i64().unwrap();
    for d in devs {
        assert!(listed(d) <= total(d), "{}", d["device"]);
        if d["ops_total"].as_u64() == Some(d["ops"].as_array().unwrap().len() as u64) {
            assert_eq!(listed(d), total(d), "{}", d["device"]);
        }
    }
    let worst = devs.iter().map(total).max().unwrap();

    let f = r["analyses"]["advisor"]["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["rule"] == "roofline_gap")
        .expect("roofline_gap finding");
    assert_eq!(f["time_at_stake_ns"].as_i64(), Some(worst));
    assert!(!f["evidence"].as_array().unwrap().is_empty());
    let line = r["headline"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|l| l.as_str())
        .find(|l| l.starts_with("efficiency: "))
        .expect("efficiency headline");
    assert!(
        line.contains("conv: ") && line.contains("% of peak"),
        "{line}"
    );
    // Without peaks: no finding, and the headline says the peak is not estimated.
    let r = profscope_json(&[
        "analyze",
        "--format",
        "json",
        "--quiet",
        root.to_str().unwrap(),
    ]);
    assert!(
        !r["analyses"]["advisor"]["findings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["rule"] == "roofline_gap")
    );
    let text = r["headline"].to_string();
    assert!(
        text.contains("TFLOPS achieved (peak not estimated)"),
        "{text}"
    );
    // The HTML roofline: one dot per op class with FLOPs, per device.
    let html = tmp("html").join("r.html");
    let out = crate::common::profscope_command()
        .args(["report", root.to_str().unwrap(), "--quiet", "--html"])
        .arg(&html)
        .args(["--peak-tflops", "300", "--peak-gbps", "1600"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let page = std::fs::read_to_string(&html).unwrap();
    assert_eq!(page.matches("class=roofline").count(), devs.len());
    let dots: usize = devs
        .iter()
        .map(|d| {
            d["ops"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|o| o["flops"].as_u64() > Some(0) && o["upper_bound"] != true)
                .count()
        })
        .sum();
    assert_eq!(page.matches("<circle").count(), dots);
}

/// Generated rows of the inference attention ops (no shared capture has one): (Type, input
/// shapes, input dtypes, output shapes, output dtypes, duration µs). Shapes from the torch_npu /
/// op-plugin / ascendtb examples and a vLLM-Ascend-style MLA decode (docs/analyses/efficiency.md).
const INFER_ROWS: &[(&str, &str, &str, &str, &str, &str)] = &[
    (
        "PromptFlashAttention",
        "1,8,164,576;1,8,1024,576;1,8,1024,576",
        "FLOAT16;FLOAT16;FLOAT16",
        "1,8,164,576",
        "FLOAT16",
        "100.52",
    ),
    (
        "PromptFlashAttention",
        "1,8,164,576;1,8,1024,576;1,8,1024,576;2048,2048",
        "FLOAT16;FLOAT16;FLOAT16;BOOL",
        "1,8,164,576",
        "FLOAT16",
        "61.3",
    ),
    (
        "IncreFlashAttention",
        "1,1,4096;1,2048,4096;1,2048,4096",
        "FLOAT16;FLOAT16;FLOAT16",
        "1,1,4096",
        "FLOAT16",
        "20.04",
    ),
    (
        "FusedInferAttentionScore",
        "4,16,1,512;64,1,128,512;64,1,128,512;4,8;4,16,1,64;64,1,128,64",
        "DT_BF16;DT_BF16;DT_BF16;INT32;DT_BF16;DT_BF16",
        "4,16,1,512;4,16,1,1",
        "DT_BF16;FLOAT",
        "35.11",
    ),
    (
        "FusedInferAttentionScore",
        "4,16,1,512;64,1,128,512;64,1,128,512;4,8;4,16,1,64;64,1,128,64",
        "DT_BF16;DT_BF16;DT_BF16;INT32;DT_BF16;DT_BF16",
        "4,16,1,512;4,16,1,1",
        "DT_BF16;FLOAT",
        "34.9",
    ),
    (
        "PagedAttentionMaskNdKernel",
        "2,32,128;16,128,32,128;16,128,32,128;2,8;2",
        "FLOAT16;FLOAT16;FLOAT16;INT32;INT32",
        "2,32,128",
        "FLOAT16",
        "12.5",
    ),
    // MHA [1, 32, 2048, 128] ×3, no mask: BNSD (Skv 2048) and BSND (Skv 32) both fit.
    (
        "PromptFlashAttention",
        "1,32,2048,128;1,32,2048,128;1,32,2048,128",
        "FLOAT16;FLOAT16;FLOAT16",
        "1,32,2048,128",
        "FLOAT16",
        "250.0",
    ),
];

/// A copy of the real text/level1 rank 0 kernel_details.csv with [`INFER_ROWS`] appended after
/// its last task (a MatMulV2 row as the template; start times 1 ms apart).
fn with_infer_rows(dir: &std::path::Path) -> std::path::PathBuf {
    let src = samples_dir()
        .join("ascend-pt/text/level1/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/kernel_details.csv");
    let mut rd = csv::Reader::from_path(&src).unwrap();
    let head = rd.headers().unwrap().clone();
    let col = |n: &str| head.iter().position(|h| h == n).unwrap();
    let rows: Vec<csv::StringRecord> = rd.records().map(Result::unwrap).collect();
    let template = rows
        .iter()
        .rev()
        .find(|r| &r[col("Type")] == "MatMulV2")
        .unwrap();
    let last: f64 = rows
        .iter()
        .map(|r| r[col("Start Time(us)")].trim().parse::<f64>().unwrap())
        .fold(0.0, f64::max);
    let out = dir.join("kernel_details.csv");
    let mut w = csv::Writer::from_path(&out).unwrap();
    w.write_record(&head).unwrap();
    for r in &rows {
        w.write_record(r).unwrap();
    }
    for (k, (ty, ish, idt, osh, odt, dur)) in INFER_ROWS.iter().enumerate() {
        let mut rec: Vec<String> = template.iter().map(str::to_string).collect();
        let nd = |dt: &str| vec!["FORMAT_ND"; dt.split(';').count()].join(";");
        for (c, v) in [
            ("Type", ty.to_string()),
            ("Name", format!("aclnn{ty}_{ty}_{ty}")),
            (
                "Start Time(us)",
                format!("{:.3}\t", last + 1000.0 * (k + 1) as f64),
            ),
            ("Duration(us)", dur.to_string()),
            ("Input Shapes", format!("\"{ish}\"")),
            ("Input Data Types", idt.to_string()),
            ("Input Formats", nd(idt)),
            ("Output Shapes", format!("\"{osh}\"")),
            ("Output Data Types", odt.to_string()),
            ("Output Formats", nd(odt)),
        ] {
            rec[col(c)] = v;
        }
        w.write_record(&rec).unwrap();
    }
    w.flush().unwrap();
    out
}

#[test]
fn inference_attention_upper_bounds_agree_with_the_oracle_on_generated_rows() {
    if skipped() {
        return;
    }
    let csv = with_infer_rows(&tmp("infer"));
    let want = oracle("csv", &csv).unwrap();
    // The oracle's attention family (python3 over the file, not profscope): 6 of the 7 rows
    // (the MHA row is ambiguous); the matmul and conv families of the real rows stay as before.
    assert_eq!(want["attention"]["calls"], 6);
    // By hand (docs/analyses/efficiency.md; infer_attention/tests.rs): PFA 3,095,396,352 and
    // causal 2,849,034,240; IFA 33,554,432; FIA MLA paged 2 × 142,606,336; ATB PA 33,554,432.
    let by_hand: u64 = 3_095_396_352 + 2_849_034_240 + 33_554_432 + 2 * 142_606_336 + 33_554_432;
    assert_eq!(want["attention"]["flops"], by_hand);
    // µs as written: 100.52 + 61.3 + 20.04 + 35.11 + 34.9 + 12.5 = 264.37 µs.
    assert_eq!(want["attention"]["time_ns"], 264_370);
    let d = &efficiency(&[
        csv.to_str().unwrap(),
        "--peak-tflops",
        "300",
        "--peak-gbps",
        "1600",
    ])[0];
    assert_agrees(d, &want, "generated inference attention rows");
    // Every attention row is an upper bound: its MFU reads as one, the family's MFU leaves them
    // out (none left: null), and their time is the family's upper_bound_ns.
    let att = family(d, "attention");
    assert_eq!(att["upper_bound_ns"], att["time_ns"]);
    assert_eq!(att["upper_bound_flops"], att["flops"]);
    assert!(att["mfu"].is_null() && att["mfu_time_ns"] == 0, "{att}");
    for o in d["ops"].as_array().unwrap() {
        assert_eq!(o["upper_bound"], o["family"] == "attention", "{o}");
    }
    let nm = d["no_model"]
        .as_array()
        .unwrap()
        .iter()
        .find(|n| n["op"] == "PromptFlashAttention")
        .unwrap();
    assert_eq!(
        (nm["calls"].as_u64(), nm["time_ns"].as_i64()),
        (Some(1), Some(250_000))
    );
    assert!(nm["reason"].as_str().unwrap().contains("ambiguous"));
    // The table prints the bounds as bounds: `≤` before throughput and MFU, `≥` before time
    // lost, and a note naming the family's upper-bound time.
    let out = crate::common::profscope_command()
        .args(["analyze", "--quiet", "--only", "efficiency"])
        .arg(&csv)
        .args(["--peak-tflops", "300", "--peak-gbps", "1600"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let pfa = text
        .lines()
        .find(|l| l.contains("PromptFlashAttention") && l.contains("Skv≤1024"))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(pfa.contains("≤ ") && pfa.contains("≥ "), "{pfa}");
    assert!(
        text.contains("upper bounds only (attention 264.370 µs)"),
        "{text}"
    );
}

/// The op_args tables of one file read with every op's input texts and with only those the
/// efficiency analysis reads (what `analyze` does).
fn read_both(path: &std::path::Path) -> (profscope::model::Tables, profscope::model::Tables) {
    use profscope::ingest::{IngestOpts, ingest_paths_with};
    let paths = [path.to_path_buf()];
    let all = ingest_paths_with(&paths, IngestOpts::ANALYSIS, &Default::default()).unwrap();
    let only = IngestOpts {
        op_inputs: Some(profscope::analysis::efficiency::reads_inputs_of),
        ..IngestOpts::ANALYSIS
    };
    let some = ingest_paths_with(&paths, only, &Default::default()).unwrap();
    (all, some)
}

/// `analyze` keeps the recorded-input texts of the ops the efficiency analysis models only; every
/// op keeps its row (empty texts), and the analysis reads the same. Input: the REAL mtia Kineto
/// trace. Expected counts from python3's json over the same file, not through profscope: 108,545
/// `X` events with a non-empty `Input Dims` or `Input type`, 20,667 of them named as an op of
/// `aten_ops::is_modelled`'s lists (aten::copy_ 7,864, aten::fill_ 2,551, aten::mul 2,044, ...).
#[test]
fn analyze_keeps_only_the_modelled_ops_input_texts() {
    use profscope::analysis::efficiency::reads_inputs_of;
    use profscope::model::StrId;
    let path = samples_dir().join("torch-traces/mtia_trace_single_rank/mtia_rank_0.json.gz");
    let (all, some) = read_both(&path);
    assert_eq!(all.op_args.len(), 108_545);
    assert_eq!(some.op_args.event, all.op_args.event);
    let mut kept = 0;
    for r in 0..all.op_args.len() {
        let text = |t: &profscope::model::Tables| {
            let a = &t.op_args;
            let s = |id| t.strings.get(id).to_string();
            (s(a.dims[r]), s(a.types[r]), s(a.concrete[r]))
        };
        if reads_inputs_of(all.event_name(all.op_args.event[r] as usize)) {
            kept += 1;
            assert_eq!(text(&some), text(&all), "row {r}");
            assert_ne!(some.op_args.dims[r], StrId::EMPTY, "row {r}");
        } else {
            let a = &some.op_args;
            assert_eq!(
                (a.dims[r], a.types[r], a.concrete[r]),
                (StrId::EMPTY, StrId::EMPTY, StrId::EMPTY)
            );
        }
    }
    assert_eq!(kept, 20_667);
    assert!(some.strings.len() < all.strings.len());
    let eff = |t: &profscope::model::Tables| {
        let a = profscope::registry::run_all(t, &Default::default());
        serde_json::to_value(&a.efficiency).unwrap()
    };
    assert_eq!(eff(&some), eff(&all));
}

/// The same texts whatever the order of an event's members: inputs written before the name are
/// dropped once the name is read. Input: GENERATED (two Kineto-style cpu_op events, `args` first).
#[test]
fn input_texts_before_the_name_are_dropped_the_same() {
    let dir = tmp("args-first");
    let path = dir.join("trace.json");
    let ev = |name: &str, ts: u32| {
        format!(
            r#"{{"ph": "X", "args": {{"Input Dims": [[2, 3], [3, 4]], "Input type": ["float", "float"], "Concrete Inputs": ["", ""]}}, "cat": "cpu_op", "name": "{name}", "pid": 1, "tid": 1, "ts": {ts}, "dur": 5}}"#
        )
    };
    let text = format!(
        r#"{{"traceEvents": [{}, {}]}}"#,
        ev("aten::detach", 10),
        ev("aten::mm", 20)
    );
    std::fs::write(&path, text).unwrap();
    let (all, some) = read_both(&path);
    let texts = |t: &profscope::model::Tables| -> Vec<String> {
        (0..t.op_args.len())
            .map(|r| t.strings.get(t.op_args.dims[r]).to_string())
            .collect()
    };
    assert_eq!(texts(&all), ["[[2, 3], [3, 4]]", "[[2, 3], [3, 4]]"]);
    assert_eq!(texts(&some), ["", "[[2, 3], [3, 4]]"]);
    assert_eq!(
        some.strings.get(some.op_args.types[1]),
        r#"["float", "float"]"#
    );
    let _ = std::fs::remove_dir_all(&dir);
}
