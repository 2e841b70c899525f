#!/usr/bin/env python3
"""Independent recomputation of the dispatch chain and of the bubble causes of the real torch_npu
db roots, straight from the SQLite tables (no profscope code), for tests/it/dispatch.rs. Test-time
helper only; run by hand (stdlib only):

    python3 tests/tools/dispatch_oracle.py ../shared/samples/ascend-pt/db/level0 \
        ../shared/samples/ascend-pt/db/level1 ../shared/samples/ascend-pt/db/level2 \
        > tests/expected/dispatch_oracle.json

Definitions (docs/analyses/dispatch.md, docs/analyses/bubbles.md), written from the tables:
- device busy = union of compute tasks (TASK rows with a COMPUTE_TASK_INFO row) and collective
  ops (COMMUNICATION_OP start..end); gaps >= 1000 ns between the first and last busy instant;
- device tasks = TASK rows except PROFILING_* and except kernel-type rows (AI_CORE, KERNEL_*, ...)
  that have no COMPUTE_TASK_INFO row (the vendor does not count those as computing either);
- a task's launch = the CANN_API row with the same connectionId (earliest start);
- per launch call: latency = first task start - call start; queue depth = tasks of earlier calls
  (by call start) whose end is after the call start;
- the task that ends a gap = the TASK row (not PROFILING_*) with the smallest start >= gap end
  (ties: smallest rowid);
- causes, first that holds: host_dispatch (that task's call started after the gap start);
  waiting_for_collective (a Notify Wait / NOTIFY_WAIT task overlaps the gap); synchronization
  (EVENT_WAIT / STREAM_WAIT overlaps); data_movement (MEMCPY_ASYNC / SDMA / PCIE_DMA / memset
  overlaps); between_steps (outside every STEP_TIME span, when there is one);
  device_scheduling (the call started at or before the gap start); unknown.
"""
import json
import sqlite3
import statistics
import sys
from pathlib import Path

KERNEL_PREFIXES = ("AI_CORE", "AI_VECTOR_CORE", "AI_CPU", "MIX_AIC", "MIX_AIV", "KERNEL_")


def quantile(sorted_vals, q):
    """numpy's default (linear interpolation between closest ranks)."""
    if not sorted_vals:
        return 0.0
    pos = q * (len(sorted_vals) - 1)
    lo, hi = int(pos // 1), int(-(-pos // 1))
    return sorted_vals[lo] + (sorted_vals[hi] - sorted_vals[lo]) * (pos - lo)


def one_db(path):
    c = sqlite3.connect(f"file:{path}?immutable=1", uri=True)
    s = dict(c.execute("SELECT id, value FROM STRING_IDS"))
    tasks = [
        (rowid, start, end, s.get(tt, str(tt)), conn, gid)
        for rowid, start, end, tt, conn, gid in c.execute(
            "SELECT rowid, startNs, endNs, taskType, connectionId, globalTaskId FROM TASK"
        )
    ]
    compute_gids = {gid for (gid,) in c.execute("SELECT globalTaskId FROM COMPUTE_TASK_INFO")}
    busy = [(t[1], t[2]) for t in tasks if t[5] in compute_gids]
    busy += list(c.execute("SELECT startNs, endNs FROM COMMUNICATION_OP"))
    busy.sort()
    union = []
    for a, b in busy:
        if union and a <= union[-1][1]:
            union[-1][1] = max(union[-1][1], b)
        else:
            union.append([a, b])
    gaps = [(union[i][1], union[i + 1][0]) for i in range(len(union) - 1)]
    gaps = [g for g in gaps if g[1] - g[0] >= 1000]

    calls = {}
    for start, end, conn, name in c.execute("SELECT startNs, endNs, connectionId, name FROM CANN_API"):
        if conn not in calls or start < calls[conn][0]:
            calls[conn] = (start, end, s.get(name))
    device = sorted(
        (
            t
            for t in tasks
            if not t[3].startswith("PROFILING_")
            and not (t[3].startswith(KERNEL_PREFIXES) and t[5] not in compute_gids)
        ),
        key=lambda t: (t[1], t[0]),
    )
    by_call = {}
    for t in device:
        if t[4] in calls:
            by_call.setdefault(t[4], []).append(t)
    order = sorted(by_call, key=lambda k: (calls[k][0], k))
    latency = sorted(min(t[1] for t in by_call[k]) - calls[k][0] for k in order)
    depth = []
    for i, k in enumerate(order):
        at = calls[k][0]
        depth.append(sum(1 for j in order[:i] for t in by_call[j] if t[2] > at))
    depth.sort()

    steps = list(c.execute("SELECT startNs, endNs FROM STEP_TIME")) if has(c, "STEP_TIME") else []

    def overlapping(kinds, a, b):
        return any(t[1] < b and t[2] > a and kinds(t[3]) for t in device)

    starts = [t[1] for t in device]
    causes = []
    for a, b in gaps:
        nxt = next((t for t in device if t[1] >= b), None)
        call = calls.get(nxt[4]) if nxt else None
        if call and call[0] > a:
            cause = "host_dispatch"
        elif overlapping(lambda k: k.upper().replace(" ", "_").startswith("NOTIFY_WAIT"), a, b):
            cause = "waiting_for_collective"
        elif overlapping(lambda k: k.startswith(("EVENT_WAIT", "STREAM_WAIT")), a, b):
            cause = "synchronization"
        elif overlapping(lambda k: k.startswith(("MEMCPY", "SDMA", "PCIE_DMA", "MEMSET")), a, b):
            cause = "data_movement"
        elif steps and not any(x < b and y > a for x, y in steps):
            cause = "between_steps"
        elif call:
            cause = "device_scheduling"
        else:
            cause = "unknown"
        causes.append({"start_ns": a, "end_ns": b, "cause": cause})
    by_cause = {}
    for g in causes:
        x = by_cause.setdefault(g["cause"], [0, 0])
        x[0] += 1
        x[1] += g["end_ns"] - g["start_ns"]
    host = by_cause.get("host_dispatch", [0, 0])
    return {
        "tasks": len(device),
        "linked_tasks": sum(len(v) for v in by_call.values()),
        "calls": len(order),
        "latency_p50_ns": quantile(latency, 0.5),
        "latency_p90_ns": quantile(latency, 0.9),
        "latency_p99_ns": quantile(latency, 0.99),
        "latency_max_ns": latency[-1] if latency else 0,
        "latency_negative": sum(1 for x in latency if x < 0),
        "depth_p50": quantile(depth, 0.5),
        "depth_max": depth[-1] if depth else 0,
        "depth_empty": sum(1 for x in depth if x == 0),
        "gaps": len(gaps),
        "idle_ns": sum(b - a for a, b in gaps),
        "host_bound_gaps": host[0],
        "host_bound_ns": host[1],
        "by_cause": {k: {"count": v[0], "total_ns": v[1]} for k, v in sorted(by_cause.items())},
        "gap_causes": causes,
    }


def has(c, table):
    return c.execute("SELECT 1 FROM sqlite_master WHERE name = ?", (table,)).fetchone() is not None


def main():
    out = {"tool": "tests/tools/dispatch_oracle.py", "roots": {}}
    for root in sys.argv[1:]:
        root = Path(root)
        ranks = {}
        for db in sorted(root.glob("*/ASCEND_PROFILER_OUTPUT/ascend_pytorch_profiler_*.db")):
            rank = db.stem.rsplit("_", 1)[1]
            ranks[rank] = one_db(db)
        out["roots"][root.parent.name + "/" + root.name] = ranks
    json.dump(out, sys.stdout, indent=1, sort_keys=True)
    print()


if __name__ == "__main__":
    main()
