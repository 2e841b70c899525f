#!/usr/bin/env python3
# Test-time oracle (tests/it/nesting.rs): `python3 tests/tools/exact_nesting.py TRACE.json`.
# Exact count of improperly nested complete events per (pid, tid) track, as Perfetto defines the
# drop: an X event that starts inside the open slice on top of the track's stack and ends after
# it. Exact: numbers parsed as Decimal, converted to integer ns.
import json, decimal, sys
from collections import defaultdict
D = decimal.Decimal
ev = json.load(open(sys.argv[1]), parse_float=D, parse_int=D)
if isinstance(ev, dict): ev = ev['traceEvents']
tracks = defaultdict(list)
for e in ev:
    if e.get('ph') != 'X': continue
    ts = int(D(e['ts']) * 1000); dur = int(D(e.get('dur', 0)) * 1000)
    tracks[(str(e.get('pid')), str(e.get('tid')))].append((ts, -dur, dur))
bad = 0; per = defaultdict(int); xs = 0
for k, v in tracks.items():
    v.sort()
    stack = []
    for ts, _, dur in v:
        xs += 1
        end = ts + dur
        while stack and stack[-1] <= ts: stack.pop()
        if stack and end > stack[-1]:
            bad += 1; per[k[0]] += 1
            continue
        stack.append(end)
print('X events', xs, 'improperly nested', bad, dict(sorted(per.items(), key=lambda x: -x[1])[:5]))
