#!/usr/bin/env python3
"""Oracle for tests/it/kineto_semantics.rs: HTA's complete-steps window of each real Kineto trace,
computed from HTA's documented rule with the standard library only (no HTA, no profscope).

Rule (HTA get_temporal_breakdown / get_gpu_kernel_breakdown, default: the last step excluded):
  * steps are the CPU-side `ProfilerStep#N` events (cat `user_annotation`); Kineto's copies of
    them on the GPU timeline (cat `gpu_user_annotation`) are annotations, not steps;
  * with at least two distinct step names, the device kernels kept are those whose launching host
    event (same `args.correlation`, on a non-GPU event) starts before the start of the last step;
  * kernels = cat `kernel`, `gpu_memcpy`, `gpu_memset`; span = first kept start to last kept end.
Also: how many gpu_user_annotation events each trace has, and the number of kernel-stream
overlaps among device events only (kernels / copies; annotations excluded).

Usage: python3 tests/tools/complete_steps.py <samples>/torch-traces > tests/expected/complete_steps.json
"""
import gzip, json, os, sys
from decimal import Decimal

DEVICE_CATS = {"kernel", "gpu_memcpy", "gpu_memset"}


def ns(x):
    # ts / dur are µs; parsed as Decimal (json floats lose ns on epoch-µs values such as
    # 1712195495505582.988), so ns are exact.
    return int((Decimal(str(x)) * 1000).to_integral_value())


def load(path):
    op = gzip.open if path.endswith(".gz") else open
    with op(path, "rt") as f:
        d = json.load(f, parse_float=Decimal)
    return d["traceEvents"] if isinstance(d, dict) else d


def one(path):
    ev = [e for e in load(path) if e.get("ph") == "X"]
    steps = [e for e in ev if str(e.get("name", "")).startswith("ProfilerStep#")
             and e.get("cat") != "gpu_user_annotation"]
    gpu_steps = [e for e in ev if str(e.get("name", "")).startswith("ProfilerStep#")
                 and e.get("cat") == "gpu_user_annotation"]
    out = {
        "cpu_steps": len(steps),
        "gpu_step_annotations": len(gpu_steps),
        "gpu_user_annotations": sum(1 for e in ev if e.get("cat") == "gpu_user_annotation"),
    }
    kernels = [e for e in ev if e.get("cat") in DEVICE_CATS]
    # overlaps per (pid, tid) among device events only, sorted by (ts, -dur)
    by_track = {}
    for e in kernels:
        by_track.setdefault((e["pid"], e["tid"]), []).append((ns(e["ts"]), ns(e["ts"]) + ns(e.get("dur", 0))))
    overlaps = 0
    for spans in by_track.values():
        spans.sort(key=lambda s: (s[0], -(s[1] - s[0])))
        max_end = None
        for a, b in spans:
            if max_end is not None and a < max_end:
                overlaps += 1
            max_end = b if max_end is None else max(max_end, b)
    out["device_overlaps"] = overlaps
    if len({e["name"] for e in steps}) < 2:
        out["complete_steps"] = None
        return out
    last = max(ns(e["ts"]) for e in steps)
    gpu_pids = {e["pid"] for e in kernels}
    launched = {e["args"]["correlation"] for e in ev
                if e.get("cat") not in DEVICE_CATS and e.get("cat") != "gpu_user_annotation"
                and e["pid"] not in gpu_pids
                and isinstance(e.get("args"), dict) and "correlation" in e["args"]
                and ns(e["ts"]) < last}
    kept = [e for e in kernels if isinstance(e.get("args"), dict)
            and e["args"].get("correlation") in launched]
    if not kept:
        out["complete_steps"] = None
        return out
    lo = min(ns(e["ts"]) for e in kept)
    hi = max(ns(e["ts"]) + ns(e.get("dur", 0)) for e in kept)
    out["complete_steps"] = {"kernels": len(kept), "span_start_ns": lo, "span_end_ns": hi,
                             "span_ns": hi - lo}
    return out


def main():
    root = sys.argv[1]
    res = {}
    for dirpath, _, files in os.walk(root):
        for f in sorted(files):
            if not (f.endswith(".json") or f.endswith(".json.gz")):
                continue
            p = os.path.join(dirpath, f)
            try:
                ev = load(p)
            except Exception:
                continue
            if not isinstance(ev, list) or not any(e.get("cat") == "kernel" for e in ev if isinstance(e, dict)):
                continue
            res[os.path.relpath(p, root)] = one(p)
    print(json.dumps({"provenance": "tests/tools/complete_steps.py (stdlib Python) on ../shared/samples/torch-traces",
                      "files": dict(sorted(res.items()))}, indent=1))


main()
