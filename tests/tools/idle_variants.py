#!/usr/bin/env python3
"""Variants of real traces for tests/it/idle_causes.rs (issue 58), each one edit of a real file
written to a new path (the samples are never touched). Stdlib only; numbers are kept exactly as
written (Decimal in, the same digits out), so every event not edited is byte-for-byte the same
value.

    python3 tests/tools/idle_variants.py block-gap IN OUT
        Kineto: the largest idle gap of the device (between the union of its `kernel` events)
        gets the trace's last synchronous copy (`hipMemcpyWithStream` / `cudaMemcpy`) and the host
        ops that enclose it on its thread, moved there: the call from 5 µs after the gap begins
        to 20 µs before it ends, each enclosing op keeping its margins around the call. The
        host sits in a synchronous copy for the whole gap, as in a serving step waiting on work
        outside the trace.
    python3 tests/tools/idle_variants.py open-early IN OUT US
        The host event that starts first (Kineto: `ProfilerStep#N`) starts US µs earlier (its
        end unchanged): the capture opened before the work arrived.
    python3 tests/tools/idle_variants.py shorten-sync IN OUT
        torch_npu trace_view.json: the longest `aclrtSynchronizeStream*` call (it holds the host
        while the device runs the step) ends 40 µs after the end of the last vendor `Free` row
        (Overlap Analysis) that starts inside it: the call returns right after that gap, as a
        sync at the end of a step does.
"""
import gzip
import json
import re
import sys
from decimal import Decimal

MARK = "@@dec@@"


def load(path):
    op = gzip.open if path.endswith(".gz") else open
    with op(path, "rt") as f:
        return json.load(f, parse_float=Decimal)


def dump(d, path):
    class Enc(json.JSONEncoder):
        def default(self, o):
            if isinstance(o, Decimal):
                return MARK + str(o) + MARK
            return super().default(o)

    text = json.dumps(d, cls=Enc)
    text = re.sub('"' + MARK + "(.*?)" + MARK + '"', r"\1", text)
    op = gzip.open if path.endswith(".gz") else open
    with op(path, "wt") as f:
        f.write(text)


def events(d):
    return d["traceEvents"] if isinstance(d, dict) else d


def us(x):
    return Decimal(str(x))


def num(x, like):
    """x (Decimal µs) written the way `like` was (a string stays a string)."""
    return str(x) if isinstance(like, str) else x


def block_gap(src, dst):
    d = load(src)
    ev = events(d)
    kernels = sorted(
        (us(e["ts"]), us(e["ts"]) + us(e.get("dur", 0)))
        for e in ev
        if e.get("ph") == "X" and e.get("cat") == "kernel"
    )
    best, end = None, None
    for s, e in kernels:
        if end is not None and (best is None or s - end > best[1] - best[0]):
            best = (end, s)
        end = e if end is None else max(end, e)
    a, b = best
    calls = [
        e
        for e in ev
        if e.get("ph") == "X" and e.get("name") in ("hipMemcpyWithStream", "cudaMemcpy")
    ]
    c = max(calls, key=lambda e: us(e["ts"]))
    cs, ce = us(c["ts"]), us(c["ts"]) + us(c["dur"])
    ns, ne = a + 5, b - 20
    parents = [
        e
        for e in ev
        if e.get("ph") == "X"
        and e is not c
        and e.get("tid") == c.get("tid")
        and e.get("cat") == "cpu_op"
        and us(e["ts"]) <= cs
        and ce <= us(e["ts"]) + us(e["dur"])
        and us(e["dur"]) < 1000
    ]
    for p in parents:
        ps, pe = us(p["ts"]), us(p["ts"]) + us(p["dur"])
        p["ts"] = num(ns - (cs - ps), p["ts"])
        p["dur"] = num((ne + (pe - ce)) - (ns - (cs - ps)), p["dur"])
    c["ts"], c["dur"] = num(ns, c["ts"]), num(ne - ns, c["dur"])
    dump(d, dst)


def open_early(src, dst, by):
    d = load(src)
    ev = [e for e in events(d) if e.get("ph") == "X" and e.get("cat") in ("user_annotation", "cpu_op")]
    first = min(ev, key=lambda e: us(e["ts"]))
    first["ts"] = num(us(first["ts"]) - Decimal(by), first["ts"])
    first["dur"] = num(us(first["dur"]) + Decimal(by), first["dur"])
    dump(d, dst)


def shorten_sync(src, dst):
    d = load(src)
    ev = events(d)
    names = {
        e["pid"]: e.get("args", {}).get("name", "")
        for e in ev
        if e.get("ph") == "M" and e.get("name") == "process_name"
    }
    syncs = [
        e
        for e in ev
        if e.get("ph") == "X" and "aclrtSynchronizeStream" in e.get("name", "")
    ]
    c = max(syncs, key=lambda e: us(e["dur"]))
    cs, ce = us(c["ts"]), us(c["ts"]) + us(c["dur"])
    free = [
        (us(e["ts"]), us(e["ts"]) + us(e["dur"]))
        for e in ev
        if e.get("ph") == "X"
        and names.get(e.get("pid")) == "Overlap Analysis"
        and e.get("name") == "Free"
        and cs < us(e["ts"]) < ce
        and us(e["dur"]) >= 1
    ]
    a, b = max(free)
    c["dur"] = num(b + 40 - cs, c["dur"])
    dump(d, dst)


if __name__ == "__main__":
    cmd, src, dst = sys.argv[1:4]
    if cmd == "block-gap":
        block_gap(src, dst)
    elif cmd == "open-early":
        open_early(src, dst, sys.argv[4])
    elif cmd == "shorten-sync":
        shorten_sync(src, dst)
    else:
        sys.exit(f"unknown variant {cmd}")
