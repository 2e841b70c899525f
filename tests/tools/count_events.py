#!/usr/bin/env python3
"""Independent oracle for tests/it/real_traces.rs.

Counts, per real Chrome-trace file in ../shared/samples, with Python's stdlib json only (no profscope
code): X events per process, timed events (X + i/I/R) per category, counter values, flow events and
metadata events. The category rules are re-implemented here from docs/tables.md ("Categories"), not
imported, so a bug in the Rust classifier shows up as a disagreement.

Usage (from the repo root):  python3 tests/tools/count_events.py ../shared/samples > tests/expected/real_trace_counts.json
"""
import gzip, json, os, sys
from collections import Counter

COMM_PREFIXES = ("hccl", "hcom_", "hcom", "allreduceaicpukernel", "broadcastaicpukernel", "allgatheraicpukernel",
                 "reducescatteraicpukernel", "alltoallaicpukernel", "alltoallvaicpukernel", "nccl", "c10d::")
WAIT = ("NOTIFY_", "EVENT_", "CAPTURE_", "WRITE_VALUE", "MEM_WAIT", "STREAM_WAIT", "BARRIER")
MOVE = ("SDMA", "PCIE_DMA", "MEMCPY", "MEMSET", "DMA", "RDMA", "MEMORY_COPY")  # DSA_SQE runs kernels: compute
BOOK = ("PLACE_HOLDER", "PROFILING_ENABLE", "PROFILING_DISABLE", "MODEL_", "MAINTENANCE")  # STARS_COMMON: DSA kernels
KINETO_DEVICE_CATS = ("kernel", "gpu_memcpy", "gpu_memset", "gpu_user_annotation")


def role_of(name, labels):
    if name == "Ascend Hardware": return "ascend_hardware"
    if name in ("HCCL", "Communication"): return "hccl"
    if name == "Overlap Analysis": return "overlap_analysis"
    if name == "CANN": return "cann_api"
    l = labels.strip()
    if l.startswith("NPU"): return "device_counters"
    if l.startswith(("GPU", "MTIA", "XPU")): return "kineto_device"
    if l.startswith("CPU") or name: return "host"
    return "unknown"


def norm(s):
    return s.upper().replace(" ", "_").replace("-", "_")


def is_comm(name):
    return name.lower().startswith(COMM_PREFIXES)


STEP_TRACE_CATS = ("Iteration Time", "FP_BP Time", "Iteration Refresh", "Reduce", "Data_aug Bound", "Get Next")
COMM_TASK = ("REDUCE_ASYNC", "REDUCE_INLINE", "REDUCE_TBE")


def category(role, cat, task_type, name, instant):
    if role == "overlap_analysis": return "vendor_overlap"
    if name.startswith("ProfilerStep#"): return "annotation" if cat == "gpu_user_annotation" else "step"
    if role == "ascend_hardware" and cat in STEP_TRACE_CATS:
        return "step" if cat == "Iteration Time" else "annotation"
    if instant: return "annotation"
    if cat in ("kernel", "Kernel"): return "comm_kernel" if is_comm(name) else "compute_kernel"
    if cat in ("gpu_memcpy", "gpu_memset", "Memcpy", "Memset"): return "data_movement"
    if cat == "cuda_sync": return "wait_sync"
    if cat in ("gpu_user_annotation", "user_annotation", "Trace", "MsTx"): return "annotation"
    if cat == "python_function": return "python_function"
    if role in ("ascend_hardware", "hccl", "kineto_device"):
        if is_comm(name): return "comm_kernel"
        for key in (task_type, name):
            if not key: continue
            k = norm(key)
            if k.startswith(WAIT) or "_WAIT" in k: return "wait_sync"
            if k.startswith(MOVE): return "data_movement"
            if k.startswith(BOOK): return "other"
            if k.startswith(COMM_TASK): return "comm_kernel"
        return "comm_kernel" if role == "hccl" else "compute_kernel"
    if role == "device_counters": return "other"
    if role in ("host", "cann_api"): return "host_op"
    return "host_op" if cat else "other"


def load(path):
    op = gzip.open if path.endswith(".gz") else open
    with op(path, "rb") as f:
        d = json.loads(f.read().decode("utf-8", "replace"))
    if isinstance(d, list): return d
    if isinstance(d, dict) and isinstance(d.get("traceEvents"), list): return d["traceEvents"]
    return None


def pid_key(p):
    return str(p)


def count(path):
    ev = load(path)
    if ev is None: return None
    pname, plabels = {}, {}
    for e in ev:
        if e.get("ph") == "M":
            a = e.get("args") or {}
            if e.get("name") == "process_name": pname[pid_key(e.get("pid"))] = a.get("name", "")
            if e.get("name") == "process_labels": plabels[pid_key(e.get("pid"))] = a.get("labels", "")
    roles = {p: role_of(pname.get(p, ""), plabels.get(p, "")) for p in set(pname) | set(plabels)}
    for e in ev:
        p = pid_key(e.get("pid"))
        if e.get("ph") in ("X", "i", "I", "R") and e.get("cat") in KINETO_DEVICE_CATS:
            if roles.get(p, "unknown") in ("unknown", "host") and not plabels.get(p):
                roles[p] = "kineto_device"
    x_by_process, by_cat = Counter(), Counter()
    counters = flows = meta = 0
    for e in ev:
        ph = e.get("ph")
        p = pid_key(e.get("pid"))
        if ph == "M":
            meta += 1
        elif ph in ("s", "t", "f"):
            flows += 1
        elif ph == "C":
            counters += sum(1 for v in (e.get("args") or {}).values() if isinstance(v, (int, float)) and not isinstance(v, bool))
        elif ph in ("X", "i", "I", "R"):
            if "ts" not in e or (ph == "X" and "dur" not in e): continue
            if ph == "X":
                x_by_process[pname.get(p) or ("pid " + p)] += 1
            a = e.get("args") or {}
            tt = a.get("Task Type") or a.get("task type") or ""
            by_cat[category(roles.get(p, "unknown"), e.get("cat") or "", tt if isinstance(tt, str) else "",
                            e.get("name") or "", ph != "X")] += 1
    return {"x_by_process": dict(sorted(x_by_process.items())), "events_by_category": dict(sorted(by_cat.items())),
            "counter_values": counters, "flow_events": flows, "metadata_events": meta}


def main(root):
    out = {}
    for dirpath, _, files in os.walk(root):
        for f in files:
            if not (f.endswith(".json") or f.endswith(".json.gz")): continue
            full = os.path.join(dirpath, f)
            try:
                c = count(full)
            except Exception as ex:  # not JSON at all
                c = None
            if c is not None:
                out[os.path.relpath(full, root)] = c
    json.dump({"provenance": "python3 tests/tools/count_events.py ../shared/samples (stdlib json only)",
               "files": dict(sorted(out.items()))}, sys.stdout, indent=1, sort_keys=False)
    print()


if __name__ == "__main__":
    main(sys.argv[1])
