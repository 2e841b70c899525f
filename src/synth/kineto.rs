//! One rank's lmdeploy-style Kineto trace (`torch.profiler` `export_chrome_trace`, gzip): an
//! object with `traceEvents`, numeric µs `ts`, `distributedInfo.rank`, CPU activities only (as
//! lmdeploy on Ascend records them): `forward_eager`, `forward_cudagraph` with nested
//! `decode_actual_batch_size=<B>` and `decode_kv_context_min=..,max=..,mean=..` user annotations.

use super::rng::Rng;
use super::truth::RankTruth;
use super::writer::{EventWriter, Sink};
use std::io::Result;
use std::path::Path;

pub fn write(path: &Path, rank: u32, world: u32, seed: u64, truth: &mut RankTruth) -> Result<u64> {
    let file = std::fs::File::create(path)?;
    let gz =
        flate2::write::GzEncoder::new(std::io::BufWriter::new(file), flate2::Compression::fast());
    let prefix = format!(
        "{{\n  \"schemaVersion\": 1,\n  \"deviceProperties\": [],\n  \"distributedInfo\": {{\"backend\": \"hccl\", \"rank\": {rank}, \"world_size\": {world}}},\n  \"displayTimeUnit\": \"ms\",\n  \"baseTimeNanoseconds\": 1736400000000000000,\n  \"traceEvents\": [\n  "
    );
    let mut w = EventWriter::new(Sink::Gz(Box::new(gz)), &prefix, false)?;
    let mut rng = Rng::new(seed ^ 0xC0FFEE ^ rank as u64);
    let pid = 40_000 + rank as i64;
    let tid = pid + 1;
    w.meta("process_name", pid, 0, "name", "\"python\"")?;
    w.meta("process_labels", pid, 0, "labels", "\"CPU\"")?;
    w.meta("thread_name", pid, tid, "name", "\"thread 1 (python)\"")?;
    truth.metadata += 3;
    let mut add = |cat: &str| *truth.kineto_x_by_cat.entry(cat.to_string()).or_default() += 1;
    let mut t: i64 = 8_408_883_000_000;
    let args = "\"External id\": 1, \"Record function id\": 0";
    for _ in 0..truth.prefill_steps {
        w.host_x(
            "forward_eager",
            pid,
            tid,
            t,
            900_000,
            ("user_annotation", args),
        )?;
        add("user_annotation");
        w.host_x(
            "aten::embedding",
            pid,
            tid,
            t + 5_000,
            40_000,
            ("cpu_op", args),
        )?;
        add("cpu_op");
        t += 1_000_000;
    }
    for step in 0..truth.decode_steps as usize {
        let (kmin, kmax, kmean) = truth.kv_context[step];
        let d = 100_000 + rng.range(0, 50_000);
        w.host_x(
            "forward_cudagraph",
            pid,
            tid,
            t,
            d,
            ("user_annotation", args),
        )?;
        w.host_x(
            &format!("decode_actual_batch_size={}", truth.batch_size),
            pid,
            tid,
            t + 1_000,
            d - 2_000,
            ("user_annotation", args),
        )?;
        w.host_x(
            &format!("decode_kv_context_min={kmin},max={kmax},mean={kmean}"),
            pid,
            tid,
            t + 2_000,
            d - 4_000,
            ("user_annotation", args),
        )?;
        w.host_x("aten::copy_", pid, tid, t + 3_000, 10_000, ("cpu_op", args))?;
        for c in [
            "user_annotation",
            "user_annotation",
            "user_annotation",
            "cpu_op",
        ] {
            add(c);
        }
        t += d + rng.range(10_000, 40_000);
    }
    w.finish("\n  ],\n  \"traceName\": \"lmdeploy_profile.json\"\n}\n")
}
