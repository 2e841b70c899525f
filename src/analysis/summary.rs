//! The ingest summary: files, ranks, time window, events per category and per device stream,
//! table sizes. Every duration is integer nanoseconds; shares say their denominator.

pub use crate::contract::summary::*;
use crate::model::{Category, Tables, ThreadId};
use std::collections::BTreeMap;

pub fn compute(t: &Tables) -> Summary {
    let e = &t.events;
    let mut per_file = vec![0u64; t.files.len()];
    let mut file_window = vec![(i64::MAX, i64::MIN); t.files.len()];
    let mut per_thread = vec![(0u64, 0i64); t.threads.len()];
    let mut per_cat = [(0u64, 0i64); Category::ALL.len()];
    // Per thread, then per category: dense (threads are few), not a map entry per event.
    const NCAT: usize = Category::ALL.len();
    let mut per_thread_cat = vec![0u64; t.threads.len() * NCAT];
    let mut thread_window = vec![(i64::MAX, i64::MIN); t.threads.len()];
    let device_thread: Vec<bool> = (0..t.threads.len())
        .map(|th| t.processes.role[t.threads.process[th].idx()].is_device())
        .collect();
    for i in 0..e.len() {
        let th = e.thread[i].idx();
        let (dur, c) = (e.dur_ns.at(i), e.category[i] as usize);
        per_thread[th].0 += 1;
        per_thread[th].1 = per_thread[th].1.saturating_add(dur);
        per_cat[c].0 += 1;
        per_cat[c].1 = per_cat[c].1.saturating_add(dur);
        let w = &mut thread_window[th];
        w.0 = w.0.min(e.ts_ns[i]);
        w.1 = w.1.max(e.ts_ns[i] + dur);
        // Streams are device threads; a host event with a stream argument (a Triton launch's
        // `args.stream`) or a marker copied onto a device thread (Step Trace, GPU annotations)
        // does not make one.
        if e.stream.at(i) >= 0
            && device_thread[th]
            && !matches!(e.category[i], Category::Step | Category::Annotation)
        {
            per_thread_cat[th * NCAT + c] += 1;
        }
    }
    for (th, &(lo, hi)) in thread_window.iter().enumerate() {
        let w = &mut file_window[t.process_file(t.threads.process[th]).idx()];
        w.0 = w.0.min(lo);
        w.1 = w.1.max(hi);
    }
    for (th, &(n, _)) in per_thread.iter().enumerate() {
        per_file[t.process_file(t.threads.process[th]).idx()] += n;
    }
    let files = (0..t.files.len())
        .map(|f| FileSummary {
            path: t.files.path[f].clone(),
            format: t.files.format[f].map_or("unknown", |x| x.as_str()),
            size_bytes: t.files.size_bytes[f],
            parsed_bytes: t.files.parsed_bytes[f],
            gzip: t.files.gzip[f],
            rank: t.files.rank[f],
            parts: t.files.parts[f],
            events: per_file[f],
            window: {
                let (lo, hi) = file_window[f];
                (lo <= hi).then_some(TimeWindow {
                    start_ns: lo,
                    end_ns: hi,
                    duration_ns: hi - lo,
                })
            },
        })
        .collect();
    let mut ranks: Vec<i32> = t.files.rank.iter().copied().filter(|&r| r >= 0).collect();
    ranks.sort_unstable();
    ranks.dedup();
    let by_category = Category::ALL
        .iter()
        .map(|&c| CategorySummary {
            category: c.as_str(),
            events: per_cat[c as usize].0,
            dur_ns_sum: per_cat[c as usize].1,
        })
        .filter(|c| c.events > 0)
        .collect();
    let device_streams = per_thread_cat
        .chunks_exact(NCAT)
        .enumerate()
        .filter(|(_, counts)| counts.iter().any(|&n| n > 0))
        .map(|(th, counts)| {
            let tid = ThreadId(th as u32);
            let p = t.thread_process(tid);
            let f = t.process_file(p).idx();
            let by_category = counts
                .iter()
                .enumerate()
                .filter(|&(_, &n)| n > 0)
                .map(|(c, &n)| (Category::ALL[c].as_str(), n))
                .collect();
            StreamSummary {
                file: t.files.path[f].clone(),
                rank: t.files.rank[f],
                process: t.process_label(p),
                device_id: t.processes.device_id[p.idx()],
                stream: t.threads.tid[th],
                thread_name: t.thread_label(tid),
                events: per_thread[th].0,
                dur_ns_sum: per_thread[th].1,
                by_category,
            }
        })
        .collect();
    Summary {
        files,
        ranks,
        events: e.len() as u64,
        processes: t.processes.len() as u64,
        threads: t.threads.len() as u64,
        counters: t.counters.len() as u64,
        flows: t.flows.len() as u64,
        distinct_strings: t.strings.len() as u64,
        by_category,
        device_streams,
    }
}

/// One summary from the summaries of disjoint sets of files (file by file ingest): files, streams
/// and counts concatenated or added. `distinct_strings` becomes the sum of each part's count
/// (every part interns its own strings).
pub fn merge(parts: Vec<Summary>) -> Summary {
    let mut out = Summary {
        files: Vec::new(),
        ranks: Vec::new(),
        events: 0,
        processes: 0,
        threads: 0,
        counters: 0,
        flows: 0,
        distinct_strings: 0,
        by_category: Vec::new(),
        device_streams: Vec::new(),
    };
    let mut cats: BTreeMap<&'static str, (u64, i64)> = BTreeMap::new();
    for p in parts {
        out.files.extend(p.files);
        out.ranks.extend(p.ranks);
        out.events += p.events;
        out.processes += p.processes;
        out.threads += p.threads;
        out.counters += p.counters;
        out.flows += p.flows;
        out.distinct_strings += p.distinct_strings;
        for c in p.by_category {
            let e = cats.entry(c.category).or_default();
            e.0 += c.events;
            e.1 += c.dur_ns_sum;
        }
        out.device_streams.extend(p.device_streams);
    }
    out.ranks.sort_unstable();
    out.ranks.dedup();
    // In Category::ALL order, as compute() lists them.
    out.by_category = Category::ALL
        .iter()
        .filter_map(|c| {
            let &(events, dur_ns_sum) = cats.get(c.as_str())?;
            Some(CategorySummary {
                category: c.as_str(),
                events,
                dur_ns_sum,
            })
        })
        .collect();
    out
}
