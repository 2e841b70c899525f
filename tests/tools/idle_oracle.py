#!/usr/bin/env python3
"""Independent recomputation of the idle facts issue 58 adds (docs/analyses/bubbles.md), straight
from a Chrome-trace JSON (Kineto trace or torch_npu trace_view.json; .gz or not), for
tests/it/idle_causes.rs. Stdlib only, no profscope code; times read exactly (Decimal µs -> ns, sub-ns digits rounded half away from zero).

    python3 tests/tools/idle_oracle.py FILE

prints one JSON object:
- `gaps`: the device's idle gaps >= 1 µs, [start_ns, end_ns]: Kineto: between the union of its
  `kernel` events; torch_npu: the vendor's own `Overlap Analysis` `Free` rows (its idle, written
  by torch_npu, so independent of profscope);
- `blocked`: per gap that a synchronous host call holds (below), {start_ns, end_ns, call,
  overlap_ns, frames, waited_for}: a call blocks the host when its API name (after `@`) starts
  with cuda / cu / hip / aclrt followed by an upper-case letter, has no `Async`, and names
  Synchronize, Memcpy, StreamWaitEvent or ends in Free / has Free_; it holds the gap when it
  overlaps at least half of it and ends at most 100 µs after it (the longest overlap wins);
  frames = host events (not on a device process) of the same tid that enclose the call, not
  runtime calls, innermost first (latest start, then earliest end), at most 6; waited_for = of
  the device tasks that end between the gap's start and the call's end (any kind; Kineto: kernel,
  gpu_memcpy, gpu_memset; torch_npu: Ascend Hardware), the one ending last, if the call ended
  within 100 µs of it, else null;
- `idle_ns`: the gaps' total;
- `host_window`: [first start, last end] of the host events (X and instant events not on a
  device process); `busy_window`: [first start, last end] of the busy time (Kineto: kernels;
  torch_npu: the Overlap Analysis Computing / Communication rows);
- `edges`: [before_ns, after_ns] = busy start - host start, host end - busy end (0 when
  negative);
- `late_launch` (torch_npu only): [count, ns] of the gaps whose next task (the first Ascend
  Hardware task starting at or after the gap's end) was launched after the gap began: its
  launch time is the start (`s`) of the `HostToDevice` flow of its `connection_id` (the flow
  ends, `f`, on a task of that connection id, matched by pid, tid and ts); gaps whose next task
  has no such flow are left out.

    python3 tests/tools/idle_oracle.py --csv FILE

reads a kernel_details.csv alone: busy = the union of every row (start, start + duration);
`gaps` >= 1 µs; per gap the `Wait Time(us)` of the row that starts at its end; `unlisted`:
[count, ns] of the gaps where that wait is above 0 and start - wait is more than 1 µs after the
gap began (the exporter saw a task end inside the gap that the file does not list);
`wait_is_row_gap`: [rows whose Wait Time is within 10 ns (the CSV's rounding) of their start
minus the previous row's end in file order (0 when that is negative), rows].
"""
import csv
import gzip
import json
import sys
from decimal import ROUND_HALF_UP, Decimal

US = Decimal(1000)
SLACK = 100_000


def ns(x):
    """µs (as written) -> ns, rounded half away from zero past the third decimal."""
    return int((Decimal(str(x).strip()) * US).quantize(Decimal(1), rounding=ROUND_HALF_UP))


def load(path):
    op = gzip.open if path.endswith(".gz") else open
    with op(path, "rt") as f:
        d = json.load(f, parse_float=Decimal)
    return d["traceEvents"] if isinstance(d, dict) else d


def blocks_host(name):
    a = name.rsplit("@", 1)[-1]
    runtime = any(
        a.startswith(p) and len(a) > len(p) and a[len(p)].isupper()
        for p in ("cuda", "cu", "hip", "aclrt")
    )
    if not runtime or "Async" in a:
        return False
    return (
        "Synchronize" in a
        or "Memcpy" in a
        or "StreamWaitEvent" in a
        or a.endswith("Free")
        or "Free_" in a
    )


def is_runtime(name):
    a = name.rsplit("@", 1)[-1]
    return any(
        a.startswith(p) and len(a) > len(p) and a[len(p)].isupper()
        for p in ("cuda", "cu", "hip", "aclrt")
    )


def main(path):
    ev = [e for e in load(path) if isinstance(e, dict)]
    names = {
        e["pid"]: e.get("args", {}).get("name", "")
        for e in ev
        if e.get("ph") == "M" and e.get("name") == "process_name"
    }
    ascend = any(v == "Ascend Hardware" for v in names.values())
    spans = [e for e in ev if e.get("ph") == "X" and "ts" in e]
    for e in ev:
        if e.get("ph") in ("X", "i", "I") and "ts" in e:
            e["_s"] = ns(e["ts"])
            e["_e"] = e["_s"] + ns(e.get("dur", 0))
    if ascend:
        device_pids = {
            p
            for p, n in names.items()
            if n in ("Ascend Hardware", "HCCL", "Overlap Analysis")
            or n in ("HBM", "LLC", "NPU MEM", "Stars Soc Info", "Acc PMU", "QoS", "AI Core Freq")
        }
        overlap = [e for e in spans if names.get(e["pid"]) == "Overlap Analysis"]
        gaps = sorted(
            (e["_s"], e["_e"]) for e in overlap if e["name"] == "Free" and e["_e"] - e["_s"] >= 1000
        )
        busy = [e for e in overlap if e["name"] in ("Computing", "Communication")]
        busy_window = (min(e["_s"] for e in busy), max(e["_e"] for e in busy))
        tasks = [
            e for e in spans if names.get(e["pid"]) in ("Ascend Hardware", "HCCL")
        ]
    else:
        kernels = sorted((e["_s"], e["_e"]) for e in spans if e.get("cat") == "kernel")
        device_pids = {
            e["pid"]
            for e in spans
            if e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset", "cuda_sync", "gpu_user_annotation")
        }
        gaps, end = [], None
        for s, e in kernels:
            if end is not None and s - end >= 1000:
                gaps.append((end, s))
            end = e if end is None else max(end, e)
        busy_window = (kernels[0][0], max(e for _, e in kernels))
        tasks = [
            e for e in spans if e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset")
        ]
    host = [
        e
        for e in ev
        if e.get("ph") in ("X", "i", "I") and "ts" in e and e.get("pid") not in device_pids
    ]
    host_window = (min(e["_s"] for e in host), max(e["_e"] for e in host))
    calls = [e for e in host if e.get("ph") == "X" and blocks_host(e["name"])]
    blocked = []
    for a, b in gaps:
        best = None
        for c in calls:
            if c["_e"] > b + SLACK or c["_s"] >= b or c["_e"] <= a:
                continue
            o = min(c["_e"], b) - max(c["_s"], a)
            if 2 * o >= b - a and (best is None or o > best[0]):
                best = (o, c)
        if best is None:
            continue
        o, c = best
        frames = sorted(
            (
                f
                for f in host
                if f.get("ph") == "X"
                and f is not c
                and f.get("tid") == c.get("tid")
                and f["_s"] <= c["_s"]
                and c["_e"] <= f["_e"]
                and not is_runtime(f["name"])
            ),
            key=lambda f: (-f["_s"], f["_e"]),
        )
        done = [t for t in tasks if a <= t["_e"] <= c["_e"]]
        last = max(done, key=lambda t: t["_e"]) if done else None
        waited = last["name"] if last is not None and c["_e"] - last["_e"] <= SLACK else None
        blocked.append(
            {
                "start_ns": a,
                "end_ns": b,
                "call": c["name"],
                "overlap_ns": o,
                "frames": [f["name"] for f in frames[:6]],
                "waited_for": waited,
            }
        )
    late = [0, 0]
    if ascend:
        flow_start = {
            e["id"]: ns(e["ts"])
            for e in ev
            if e.get("cat") == "HostToDevice" and e.get("ph") == "s"
        }
        ends = {
            (e["pid"], e["tid"], ns(e["ts"])): flow_start.get(e["id"])
            for e in ev
            if e.get("cat") == "HostToDevice" and e.get("ph") == "f"
        }
        hw = sorted(
            (e["_s"], e) for e in spans if names.get(e["pid"]) == "Ascend Hardware"
        )
        by_conn = {}
        for _, e in hw:
            at = ends.get((e["pid"], e["tid"], e["_s"]))
            conn = e.get("args", {}).get("connection_id")
            if at is not None and conn is not None:
                by_conn[conn] = min(at, by_conn.get(conn, at))
        starts = [x[0] for x in hw]
        import bisect

        for a, b in gaps:
            k = bisect.bisect_left(starts, b)
            if k == len(hw):
                continue
            at = by_conn.get(hw[k][1].get("args", {}).get("connection_id"))
            if at is not None and at > a:
                late[0] += 1
                late[1] += b - a
    print(
        json.dumps(
            {
                "late_launch": late,
                "gaps": gaps,
                "idle_ns": sum(b - a for a, b in gaps),
                "blocked": blocked,
                "host_window": host_window,
                "busy_window": busy_window,
                "edges": [
                    max(0, busy_window[0] - host_window[0]),
                    max(0, host_window[1] - busy_window[1]),
                ],
            }
        )
    )


def main_csv(path):
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    key = lambda r, *c: next(r[x] for x in c if x in r)
    for r in rows:
        r["_s"] = ns(key(r, "Start Time(us)", "Task Start Time(us)").strip())
        r["_e"] = r["_s"] + ns(key(r, "Duration(us)", "Task Duration(us)").strip())
        r["_w"] = ns(key(r, "Wait Time(us)", "Task Wait Time(us)").strip())
    same = sum(
        1
        for i, r in enumerate(rows)
        if abs(r["_w"] - (max(0, r["_s"] - rows[i - 1]["_e"]) if i else 0)) <= 10
    )
    order = sorted(rows, key=lambda r: (r["_s"], r["_e"]))
    gaps, end = [], None
    for r in order:
        if end is not None and r["_s"] - end >= 1000:
            gaps.append((end, r["_s"], r["_w"]))
        end = r["_e"] if end is None else max(end, r["_e"])
    unl = [(a, b) for a, b, w in gaps if w > 0 and b - w > a + 1000]
    print(
        json.dumps(
            {
                "gaps": [[a, b] for a, b, _ in gaps],
                "idle_ns": sum(b - a for a, b, _ in gaps),
                "unlisted": [len(unl), sum(b - a for a, b in unl)],
                "wait_is_row_gap": [same, len(rows)],
            }
        )
    )


if __name__ == "__main__":
    if sys.argv[1] == "--csv":
        main_csv(sys.argv[2])
    else:
        main(sys.argv[1])
