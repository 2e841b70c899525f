//! npu-smi and vLLM-log readers on every real sample (../shared/samples/npu-smi, the npu-smi
//! snippets in ascend-misc/mstt/snippets, ../shared/samples/vllm-logs) and on the real example
//! lines quoted in serving-evidence.md section 2.2.
//!
//! Expected values come from the documented regexes of serving-evidence.md 1.3 and 2.3 run with
//! Python's `re` over the same files (one line at a time, `rstrip`ped; the bus-id class widened to
//! accept the `xx` a reporter masked), not from this code:
//! chips, sum of HBM used / total, process rows, sum of process MB, idle NPU ids per file;
//! line, format, process tag, pid and value per memory line.

use profscope::ingest::evidence::{npu_smi, vllm_log};
use profscope::model::serving::VllmValue;
use std::path::Path;

const S: &str = "../shared/samples";

fn smi(rel: &str) -> profscope::model::serving::NpuSmiSnapshot {
    npu_smi::read(&Path::new(S).join(rel)).unwrap()
}

/// (file, layout, chips, HBM used sum, HBM total sum, processes, process MB sum, idle NPUs)
type Case = (
    &'static str,
    &'static str,
    usize,
    u64,
    u64,
    usize,
    f64,
    &'static [u32],
);

#[test]
fn every_npu_smi_sample_parses_to_the_regex_oracle() {
    // (file, layout, chips, HBM used sum, HBM total sum, processes, process MB sum, idle NPUs)
    let cases: &[Case] = &[
        (
            "ascend-misc/mstt/snippets/npu_smi_info_910b4_hami_webui_issue47.txt",
            "classic",
            2,
            6394,
            131072,
            0,
            0.0,
            &[],
        ),
        (
            "ascend-misc/mstt/snippets/npu_smi_info_a3_vllm_ascend_issue12980.txt",
            "a3",
            2,
            6293,
            131072,
            0,
            0.0,
            &[],
        ),
        (
            "ascend-misc/mstt/snippets/npu_smi_info_a3_vllm_ascend_issue2534.txt",
            "a3",
            3,
            10026,
            196608,
            0,
            0.0,
            &[],
        ),
        (
            "npu-smi/triton-ascend-faq_a2-910b4_1card_idle_npu-smi-26.0.rc1_wide.txt",
            "wide",
            1,
            2871,
            32768,
            0,
            0.0,
            &[0],
        ),
        (
            "npu-smi/vllm-ascend-2523_a3-16die_procs-truncated-name-multi_npu-smi-24.1.rc3.7.txt",
            "a3",
            16,
            54248,
            1048576,
            18,
            2106.0,
            &[6, 7],
        ),
        (
            "npu-smi/vllm-ascend-3548_a3-16die_procs-unnamed-multi-per-chip_npu-smi-25.3.rc1.txt",
            "a3",
            16,
            244231,
            1048576,
            7,
            196280.0,
            &[2, 3, 4, 5, 6, 7],
        ),
        (
            "npu-smi/vllm-ascend-4661_a2-910b2_8card_vllmworker-dp_npu-smi-24.1.rc2.1.txt",
            "classic",
            8,
            267417,
            524288,
            8,
            240897.0,
            &[],
        ),
        (
            "npu-smi/vllm-ascend-5606_a2-910b4-1_2card_vllmworker-tp_npu-smi-25.2.2.txt",
            "classic",
            2,
            123650,
            131072,
            2,
            116944.0,
            &[],
        ),
        (
            "npu-smi/vllm-ascend-5784_a3-16die_idle_npu-smi-25.2.1.txt",
            "a3",
            16,
            48000,
            1048576,
            0,
            0.0,
            &[0, 1, 2, 3, 4, 5, 6, 7],
        ),
        (
            "npu-smi/vllm-ascend-843_a2-910b4_4card-visible_procs_npu-smi-23.0.6.txt",
            "classic",
            4,
            116383,
            131072,
            4,
            105291.0,
            &[],
        ),
    ];
    for &(f, layout, chips, used, total, procs, proc_mb, idle) in cases {
        let s = smi(f);
        assert_eq!(s.layout, layout, "{f}");
        assert_eq!(s.chips.len(), chips, "{f}");
        assert_eq!(
            s.chips.iter().map(|c| c.hbm_used_mb).sum::<u64>(),
            used,
            "{f}"
        );
        assert_eq!(
            s.chips.iter().map(|c| c.hbm_total_mb).sum::<u64>(),
            total,
            "{f}"
        );
        assert_eq!(s.processes.len(), procs, "{f}");
        assert_eq!(
            s.processes.iter().map(|p| p.memory_mb).sum::<f64>(),
            proc_mb,
            "{f}"
        );
        assert_eq!(s.idle_npus, idle, "{f}");
        assert!(s.unparsed.is_empty(), "{f}: {:?}", s.unparsed);
    }
}

#[test]
fn npu_smi_cells_that_matter_for_attribution() {
    // 4661 (A2): NPU 0 uses 33429 of 65536 MB; its worker VLLMWorker_DP pid 784778 holds 30112.
    let s = smi("npu-smi/vllm-ascend-4661_a2-910b2_8card_vllmworker-dp_npu-smi-24.1.rc2.1.txt");
    assert_eq!(s.version.as_deref(), Some("24.1.rc2.1"));
    let c = &s.chips[0];
    assert_eq!(
        (c.npu, c.chip, c.phy_id, c.name.as_str()),
        (0, 0, None, "910B2")
    );
    assert_eq!(
        (c.hbm_used_mb, c.hbm_total_mb, c.power_w, c.temp_c),
        (33429, 65536, Some(92.0), Some(38.0))
    );
    let p = &s.processes[0];
    assert_eq!(
        (p.npu, p.chip, p.pid, p.name.as_str(), p.memory_mb),
        (0, 0, 784778, "VLLMWorker_DP", 30112.0)
    );
    assert_eq!(s.chip_of(p).unwrap().device(), 0);
    // 843: only NPUs 4..7 are visible; "29096/ 32768" has no space before the slash.
    let s = smi("npu-smi/vllm-ascend-843_a2-910b4_4card-visible_procs_npu-smi-23.0.6.txt");
    assert_eq!(
        s.chips.iter().map(|c| c.npu).collect::<Vec<_>>(),
        [4, 5, 6, 7]
    );
    assert_eq!(s.chips[0].hbm_used_mb, 29096);
    // 3548 (A3): die 1 of NPU 0 is phy 1 with power `-`; PID 4071418 holds 112 MB on chip 0 and
    // 49681 MB on chip 1 (phy 1); names are empty.
    let s =
        smi("npu-smi/vllm-ascend-3548_a3-16die_procs-unnamed-multi-per-chip_npu-smi-25.3.rc1.txt");
    let die1 = &s.chips[1];
    assert_eq!(
        (
            die1.npu,
            die1.chip,
            die1.phy_id,
            die1.power_w,
            die1.hbm_used_mb
        ),
        (0, 1, Some(1), None, 52518)
    );
    let on_phy1: Vec<_> = s
        .processes
        .iter()
        .filter(|p| s.chip_of(p).unwrap().device() == 1)
        .collect();
    assert_eq!(on_phy1.len(), 1);
    assert_eq!(
        (
            on_phy1[0].pid,
            on_phy1[0].memory_mb,
            on_phy1[0].name.as_str()
        ),
        (4071418, 49681.0, "")
    );
    // NPU 7 die 1 is phy 15.
    assert_eq!(s.chips[15].device(), 15);
    // 2523: names truncated to 15 characters by npu-smi.
    let s =
        smi("npu-smi/vllm-ascend-2523_a3-16die_procs-truncated-name-multi_npu-smi-24.1.rc3.7.txt");
    assert!(s.processes.iter().all(|p| p.name == "/usr/local/pyth"));
}

#[test]
fn npu_smi_rejects_other_text_with_a_clear_error() {
    let e = npu_smi::parse("hello\nworld\n", "x.txt")
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("x.txt") && e.contains("no npu-smi device rows"),
        "{e}"
    );
    // A wide-layout process row with a container pid (the form quoted in serving-evidence.md 1.1).
    let text = "| NPU   Name                | Health        | Power(W)             Temp(C)                 Hugepages-Usage(page)   |\n\
| 0     910B4               | OK            | 82.6                 32                      0    / 0                |\n\
| 0                         | 0000:C1:00.0  | 0                    0    / 0                2871 / 32768            |\n\
| NPU     Chip              | Process id    | Process name       | Process memory(MB)    | Process id in container |\n\
| 0       0                 | 1504884       |                    | 35358                 | 412309                  |\n";
    let s = npu_smi::parse(text, "wide").unwrap();
    assert_eq!(s.layout, "wide");
    assert_eq!(s.processes[0].container_pid.as_deref(), Some("412309"));
    assert_eq!(s.processes[0].memory_mb, 35358.0);
}

const GIB: f64 = (1u64 << 30) as f64;
fn g(x: f64) -> i64 {
    (x * GIB).round() as i64
}

#[test]
fn every_vllm_log_sample_gives_the_regex_oracle_lines() {
    let log = |f: &str| vllm_log::read(&Path::new(S).join("vllm-logs").join(f)).unwrap();
    let l = log("ascend-pytorch-78_310p3_vllm-ascend-v0.9.2rc1_seed-x-7b_startup.log");
    let got: Vec<_> = l
        .records
        .iter()
        .map(|r| (r.line, r.format, r.pid))
        .collect();
    assert_eq!(
        got,
        [
            (16, "W1/W2", None),
            (26, "K1", None),
            (28, "T1", None),
            (30, "T2", None)
        ]
    );
    assert!(matches!(l.records[0].value, VllmValue::Weights { bytes, .. } if bytes == g(14.0046)));
    assert!(matches!(
        l.records[1].value,
        VllmValue::KvAvailableAndTotal {
            kv_bytes: 24180219801,
            total_bytes: 45816029184
        }
    ));
    assert!(matches!(
        l.records[2].value,
        VllmValue::KvTokens { tokens: 184448 }
    ));
    assert!(matches!(l.records[3].value,
        VllmValue::MaxConcurrency { tokens_per_request: 4096, times } if times == 45.03));

    let l = log("mooncake-2827_vllm-ascend_dsv4-flash_dp2-tp8_free-memory-summary-excerpt.log");
    assert_eq!(l.records.len(), 2);
    let r = &l.records[0];
    assert_eq!(
        (r.line, r.format, r.process.as_deref(), r.pid),
        (1, "S1", Some("Worker_DP1_TP7_EP15"), Some(2653))
    );
    match &r.value {
        VllmValue::Summary {
            free_bytes,
            total_bytes,
            utilization,
            weights_bytes,
            activation_bytes,
            non_torch_bytes,
            graph_bytes,
            kv_bytes,
            reserved_bytes,
            ..
        } => {
            assert_eq!(
                (*free_bytes, *total_bytes, *utilization),
                (g(60.6), g(60.96), 0.95)
            );
            assert_eq!(
                (
                    *weights_bytes,
                    *activation_bytes,
                    *non_torch_bytes,
                    *graph_bytes,
                    *kv_bytes
                ),
                (g(39.51), g(1.52), g(3.15), 0, g(13.73))
            );
            assert_eq!(*reserved_bytes, None);
        }
        v => panic!("{v:?}"),
    }
    assert_eq!(
        (l.records[1].line, l.records[1].format, l.records[1].pid),
        (5, "E1/E2", Some(2589))
    );
    assert!(
        matches!(l.records[1].value, VllmValue::InitEngine { secs, compilation_secs: None } if secs == 29.90)
    );

    let l = log("vllm-ascend-4661_v0.11.0rc2_qwen3-235b_dp2-tp8-ep_torchair_weights-excerpt.log");
    let got: Vec<_> = l
        .records
        .iter()
        .map(|r| (r.line, r.process.clone().unwrap(), r.pid.unwrap()))
        .collect();
    assert_eq!(
        got,
        [
            (7, "Worker_DP0_TP6_EP6".to_string(), 659292),
            (8, "Worker_DP0_TP3_EP3".into(), 659289)
        ]
    );

    let l = log("vllm-ascend-6526_310p_v0.14.0rc1_qwen3-coder-30b-tp4_weights-excerpt.log");
    let got: Vec<_> = l.records.iter().map(|r| (r.line, r.pid.unwrap())).collect();
    assert_eq!(got, [(7, 275), (9, 273), (11, 276), (13, 274)]);
    assert!(
        l.records
            .iter()
            .all(|r| matches!(r.value, VllmValue::Weights { bytes, .. } if bytes == g(14.2651)))
    );
}

/// The real example lines of serving-evidence.md 2.2 (quoted there from real logs), one per
/// format that the saved samples lack, with their prefixes (ANSI, `grep -n`, nested tags,
/// `[vllm-ascend] - `) as the doc describes them.
#[test]
fn documented_real_lines_of_every_other_format() {
    let text = "\
12:(APIServer pid=5332) (DPEngineCoreActor pid=5439, ip=10.233.69.249) INFO 01-01 00:00:01 [worker.py:423] [vllm-ascend] - Available KV cache memory: 0.30 GiB
\x1b[1;36m(EngineCore_0 pid=82)\x1b[0;0m INFO 01-01 00:00:02 [gpu_worker.py:279] Available KV cache memory: 37.10 GiB
(Worker_TP0 pid=1) INFO 01-01 00:00:03 [gpu_model_runner.py:6243] Graph capturing finished in 7 secs, took 0.34 GiB
INFO 01-01 00:00:04 [gpu_worker.py:1] CUDA graph pool memory: 0.34 GiB (actual), 0.55 GiB (estimated), difference: 0.21 GiB (62.0%).
INFO 08-16 20:01:30 [worker.py:295] model weights take 0.52GiB; non_torch_memory takes 0.06GiB; PyTorch activation peak memory takes 1.61GiB; the rest of the memory reserved for KV Cache is 16.29GiB.
DEBUG 01-01 00:00:05 [v1/worker/gpu_worker.py:399] Memory profiling takes 24.71 seconds. Total non KV cache memory: 16.70GiB; torch peak memory increase: 1.40GiB; non-torch forward increase memory: -15.24GiB; weights memory: 15.27GiB.
INFO 01-01 00:00:06 [gpu_model_runner.py:1] Model loading took 0.5151 GiB and 5.839312 seconds
INFO 01-01 00:00:07 [core.py:299] init engine (profile, create kv cache, warmup model) took 116.11 s (compilation: 45.84 s)
INFO 10-25 14:37:19 model_runner.py:255] Loading model weights took 14.2409 GB
INFO 01-01 00:00:08 [executor_base.py:1] # npu blocks: 1395, # CPU blocks: 2340
INFO 01-01 00:00:09 [kv_cache_utils.py:720] Maximum concurrency for 8192 tokens per request: 45.03x
";
    let l = vllm_log::parse(text, "doc");
    let got: Vec<_> = l
        .records
        .iter()
        .map(|r| (r.line, r.format, r.process.as_deref(), r.pid))
        .collect();
    assert_eq!(
        got,
        [
            (1, "K2-K5", Some("DPEngineCoreActor"), Some(5439)),
            (2, "K2-K5", Some("EngineCore_0"), Some(82)),
            (3, "G1/G2", Some("Worker_TP0"), Some(1)),
            (4, "G3", None, None),
            (5, "P1", None, None),
            (6, "P2", None, None),
            (7, "W3-W5", None, None),
            (8, "E1/E2", None, None),
            (9, "W1/W2", None, None),
            (10, "B1", None, None),
            (11, "T2", None, None),
        ]
    );
    let v: Vec<&VllmValue> = l.records.iter().map(|r| &r.value).collect();
    assert!(matches!(v[0], VllmValue::KvAvailable { bytes } if *bytes == g(0.30)));
    assert!(
        matches!(v[2], VllmValue::GraphCapture { secs, bytes } if *secs == 7.0 && *bytes == g(0.34))
    );
    assert!(
        matches!(v[5], VllmValue::ProfileResult { non_torch_bytes, weights_bytes, .. } if *non_torch_bytes == g(-15.24) && *weights_bytes == g(15.27))
    );
    assert!(
        matches!(v[7], VllmValue::InitEngine { secs, compilation_secs: Some(c) } if *secs == 116.11 && *c == 45.84)
    );
    assert!(
        matches!(v[9], VllmValue::Blocks { device, blocks: 1395, cpu_blocks: Some(2340) } if device == "npu")
    );
}
