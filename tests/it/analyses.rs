//! The timeline analyses against independent expectations.
//! Real: the torch CPU trace (../shared/samples/torch-cpu; SOURCES.md says it ran one prefill and 4
//! decode steps at batch 4 with KV context min 130, max 161, mean 145.5).
//! Generated: profscope synth runs, compared with the generator's own bookkeeping.

use crate::common;

use profscope::analysis::{
    batch_audit, communication, composition, devices, families, mtp, phases, step_sync, top_events,
};
use std::collections::BTreeMap;

#[test]
fn real_torch_cpu_trace_is_a_valid_decode_capture_at_batch_4() {
    for name in [
        "torch_cpu_tiny_transformer_trace.json",
        "torch_cpu_tiny_transformer_trace.json.gz",
    ] {
        let t = common::ingest(&common::samples_dir().join("torch-cpu").join(name));
        let p = &phases::compute(&t)[0];
        assert!(p.decode_valid && p.prefill_valid && p.mixed, "{name}");
        assert_eq!((p.prefill.count, p.decode.count), (1, 4));
        let a = batch_audit::compute(&t, None);
        assert_eq!(a.batch, Some(4));
        assert!(a.fixed_batch_proven, "{}", a.statement);
        let r = &a.ranks[0];
        assert_eq!((r.replays, r.qualified, r.bare, r.one_marker), (4, 4, 0, 0));
        for kv in &r.kv {
            assert_eq!((kv.min, kv.max, kv.mean), (130, 161, 145.5));
        }
        // Requiring another batch size disqualifies every replay.
        let b8 = batch_audit::compute(&t, Some(8));
        assert!(!b8.fixed_batch_proven);
        assert_eq!((b8.ranks[0].qualified, b8.ranks[0].other_batch), (0, 4));
    }
}

#[test]
fn real_ascend_training_trace_has_no_decode_phase() {
    let t = common::ingest(
        &common::samples_dir()
            .join("ascend-pt/text/level1/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/trace_view.json"),
    );
    let p = &phases::compute(&t)[0];
    assert!(
        !p.decode_valid && !p.prefill_valid,
        "a CNN training step is neither: never inferred from kernels"
    );
    assert!(!batch_audit::compute(&t, None).fixed_batch_proven);
}

#[test]
fn generated_run_matches_ground_truth() {
    let run = common::generated("analyses", 2, 300_000, 11, true);
    let (dir, truth) = (&run.dir, &run.truth);
    for rt in &truth.ranks {
        let t = common::ingest(&dir.join(&rt.trace_view));
        let devs = devices::devices(&t);
        assert_eq!(devs.len(), 1);

        // update_step_context: every decode step, NOTIFY_WAIT and replay exactly.
        let s = &step_sync::compute(&t, &devs)[0];
        let notify: Vec<i64> = s.steps.iter().map(|x| x.notify_wait_ns).collect();
        let replay: Vec<i64> = s.steps.iter().map(|x| x.replay_ns).collect();
        assert_eq!(notify, rt.notify_wait_ns);
        assert_eq!(replay, rt.replay_ns);
        assert_eq!(
            s.notify_wait_total_ns,
            rt.notify_wait_ns.iter().sum::<i64>()
        );

        // MTP: one head per step; every MEM_WAIT_VALUE and head burst exactly.
        let m = &mtp::compute(&t, &devs)[0];
        assert_eq!(
            m.heads_per_step,
            BTreeMap::from([(1usize, rt.decode_steps)])
        );
        assert_eq!(m.mem_wait_ns, rt.mem_wait_ns);
        assert_eq!(m.head_burst_ns, rt.mtp_head_ns);
        assert_eq!(m.main_burst_total_ns, rt.replay_ns.iter().sum::<i64>());

        // Composition: all compute runs on stream 2; per-name and per-family totals.
        let c = &composition::compute(&t, &devs, 50)[0];
        assert_eq!(c.busiest_stream, Some(2));
        assert_eq!(c.streams.len(), 1);
        let names: BTreeMap<String, (u64, i64)> = c
            .busiest_by_sum
            .iter()
            .map(|k| (k.name.clone(), (k.count, k.sum_ns)))
            .collect();
        let want: BTreeMap<String, (u64, i64)> = rt
            .kernels
            .iter()
            .map(|(k, v)| (k.clone(), (v.count, v.dur_ns)))
            .collect();
        assert_eq!(names, want);
        let mut fam_want: BTreeMap<String, (u64, i64)> = BTreeMap::new();
        for (k, v) in &rt.kernels {
            let e = fam_want
                .entry(families::family_of(k).to_string())
                .or_default();
            e.0 += v.count;
            e.1 += v.dur_ns;
        }
        let fam: BTreeMap<String, (u64, i64)> = c
            .families
            .iter()
            .map(|f| (f.name.clone(), (f.count, f.sum_ns)))
            .collect();
        assert_eq!(fam, fam_want);
        assert!(
            (c.families.iter().map(|f| f.pct_of_compute).sum::<f64>() - 100.0).abs() < 1e-9,
            "shares sum to 100%"
        );

        // Communication (a): device comm kernels and their share of compute time.
        let m = &communication::compute(&t, &devs)[0];
        assert_eq!(m.comm_kernels_source, "device_comm_kernels");
        assert_eq!(
            (m.comm_kernels.count, m.comm_kernels.sum_ns),
            (rt.comm_kernels.count, rt.comm_kernels.dur_ns)
        );
        let compute_ns: i64 = rt.kernels.values().map(|v| v.dur_ns).sum();
        assert_eq!(m.compute_kernel_ns, compute_ns);
        assert_eq!(m.notify_wait.sum_ns, rt.notify_wait_ns.iter().sum::<i64>());
        assert_eq!(
            m.data_movement.sum_ns,
            rt.by_category["data_movement"].dur_ns
        );
        assert_eq!(
            m.overlapped_with_compute_ns, 0,
            "the generator never overlaps comm with compute"
        );

        // Top compute events equal the kernel totals.
        let top = top_events::compute(&t, &devs, 50);
        let tc = top.iter().find(|x| x.subset.as_str() == "compute").unwrap();
        assert_eq!(tc.subset_sum_ns, compute_ns);
        assert!(tc.by_sum.windows(2).all(|w| w[0].sum_ns >= w[1].sum_ns));

        // Vendor rows written by the generator agree exactly with the analysis.
        let dt = &profscope::analysis::device_time::compute(&t, &devs)[0];
        let v = dt.vendor.as_ref().unwrap();
        assert_eq!(
            (v.computing_ns, v.communication_ns, v.free_ns),
            (dt.computing_ns, dt.communication_ns, dt.free_ns)
        );

        // The decode audit, on both the torch_npu trace and the lmdeploy Kineto file of the rank.
        for file in [rt.trace_view.clone(), rt.kineto.clone().unwrap()] {
            let t = common::ingest(&dir.join(&file));
            let a = batch_audit::compute(&t, None);
            assert_eq!(a.batch, Some(rt.batch_size as i64), "{file}");
            let r = &a.ranks[0];
            assert_eq!(
                (r.replays, r.qualified),
                (rt.decode_steps, rt.decode_steps),
                "{file}"
            );
            let kv: Vec<(i64, i64, f64)> = r.kv.iter().map(|k| (k.min, k.max, k.mean)).collect();
            assert_eq!(kv, rt.kv_context, "{file}");
        }
    }
}

/// `--phase`: device work follows its launch into the phase of the CPU scope that launched it.
/// Generated: compute kernels per phase equal what the generator launched in each phase (the last
/// prefill kernels run after the first decode scope has started: attribution by start time alone
/// would misplace them). Real: the torch CPU trace splits into 1 forward_eager and 4 replays.
#[test]
fn phase_slicing_follows_launches() {
    use profscope::analysis::phases::{Phase, slice};
    let run = common::generated("phase", 1, 200_000, 21, false);
    let (dir, truth) = (&run.dir, &run.truth);
    let rt = &truth.ranks[0];
    let t = common::ingest(&dir.join(&rt.trace_view));
    for (phase, key) in [(Phase::Prefill, "prefill"), (Phase::Decode, "decode")] {
        let (s, info) = slice(&t, phase);
        assert!(info.device_by_launch > 0);
        let kernels: Vec<usize> = (0..s.events.len())
            .filter(|&i| {
                s.events.category[i] == profscope::model::Category::ComputeKernel
                    && s.event_role(i) == profscope::model::ProcessRole::AscendHardware
            })
            .collect();
        let sum: i64 = kernels.iter().map(|&i| s.events.dur_ns.at(i)).sum();
        assert_eq!(
            (kernels.len() as u64, sum),
            (rt.phase_kernels[key].count, rt.phase_kernels[key].dur_ns),
            "{key}"
        );
        let p = &phases::compute(&s)[0];
        assert_eq!(
            (p.prefill_valid, p.decode_valid),
            (phase == Phase::Prefill, phase == Phase::Decode)
        );
    }
    // The launch link matters: by start time alone, the last prefill kernels (which start after the
    // first decode scope opened) would count as decode.
    let mut starts: Vec<(i64, bool)> = phases::scopes(&t, "forward_eager")
        .into_iter()
        .map(|i| (t.events.ts_ns[i], true))
        .collect();
    starts.extend(
        phases::scopes(&t, "forward_cudagraph")
            .into_iter()
            .map(|i| (t.events.ts_ns[i], false)),
    );
    starts.sort();
    let naive_prefill = (0..t.events.len())
        .filter(|&i| t.events.category[i] == profscope::model::Category::ComputeKernel)
        .filter(|&i| t.event_role(i) == profscope::model::ProcessRole::AscendHardware)
        .filter(|&i| {
            let k = starts.partition_point(|x| x.0 <= t.events.ts_ns[i]);
            k > 0 && starts[k - 1].1
        })
        .count() as u64;
    assert!(
        naive_prefill < rt.phase_kernels["prefill"].count,
        "naive {naive_prefill}"
    );

    let t = common::ingest(
        &common::samples_dir().join("torch-cpu/torch_cpu_tiny_transformer_trace.json"),
    );
    let (d, _) = slice(&t, Phase::Decode);
    let p = &phases::compute(&d)[0];
    assert_eq!((p.prefill.count, p.decode.count), (0, 4));
    assert_eq!(batch_audit::compute(&d, None).ranks[0].qualified, 4);
    let (pf, _) = slice(&t, Phase::Prefill);
    assert_eq!(phases::compute(&pf)[0].prefill.count, 1);
}
