"""Independent FLOPs and time per family for tests/it/efficiency.rs, from the real files and not
through profscope: the op definitions (docs/analyses/efficiency.md) coded again here.

  python3 tests/tools/efficiency_oracle.py db PATH.db
      sqlite3: COMPUTE_TASK_INFO joined with TASK (time = endNs - startNs) and STRING_IDS.
  python3 tests/tools/efficiency_oracle.py csv kernel_details.csv
      csv: the compute rows (Accelerator Core not HCCL / COMMUNICATION); time = Duration(us)
      read as a decimal, times 1000.
  python3 tests/tools/efficiency_oracle.py text kernel_details.csv
      a text export: the csv rows' shapes, the time of the trace_view.json event beside it with
      the same start and name (its float µs `dur` as a decimal, times 1000, rounded half away
      from zero: the timeline's own duration; the CSV's 3-decimal column can be 1 ns off).
  python3 tests/tools/efficiency_oracle.py kineto TRACE.json[.gz]
      json: GEMM ops (aten::mm / addmm / bmm / baddbmm / matmul / linear) with `Input Dims`;
      each GPU kernel (cat kernel) is charged to the outermost GEMM op on the thread of the host
      event with its correlation id (the launch), the op's FLOPs counted once; time = the
      kernels' durations (µs as written, exact decimal, times 1000).

Prints one JSON object: {family: {"calls", "time_ns", "flops"}} for the families it models
(Ascend: matmul, conv, attention of the inference ops; Kineto: matmul). Inference attention
(IncreFlashAttention, PromptFlashAttention, FusedInferAttentionScore, ATB PagedAttention*,
docs/analyses/efficiency.md): an upper bound, 2 · Skv · (query elements / Sq) · (key + value
elements) / key elements (+ query_rope elements), Skv the key's length (non-paged) or block
table width × block size (paged); causal pairs with a 2-D 2048×2048 mask; None (no model) for
TND and for 4-D shapes that fit BNSD and BSND with different Skv when no mask shape decides. Ascend formulas: matmul 2·batch·M·N·K with M, N the
output's last two dims (FRACTAL_NZ: its last four) and K = (x1's last two dims' product) / M;
Conv2D / Conv2DBackpropInput / Conv2DBackpropFilter 2·(N·Ho·Wo of the forward output: the
output, resp. input 2) · (elements of the filter as stored: input 1, resp. output 0).
"""
import csv
import gzip
import json
import sqlite3
import sys
from decimal import ROUND_HALF_UP, Decimal


def prod(xs):
    p = 1
    for x in xs:
        p *= x
    return p


def shapes(s):
    s = (s or '').strip()
    if s in ('', 'N/A'):
        return None
    out = []
    for part in s.strip('"').split(';'):
        part = part.strip()
        out.append([int(d) for d in part.split(',')] if part else [])
    return out


def items(s):
    s = (s or '').strip()
    return [] if s in ('', 'N/A') else [x.strip().split(':')[0].replace('FORMAT_', '') for x in s.split(';')]


def ascend_flops(op, ins, infmt, outs, outfmt, dts=()):
    if ins is None or outs is None:
        return None
    if op.startswith(INFER):
        f = infer_attention(op, ins, list(dts), outs)
        return None if f is None else ('attention', f)
    if 'matmul' in op.lower():
        y, x1 = outs[0], ins[0]
        nz = outfmt[:1] == ['FRACTAL_NZ']
        if nz:
            n1, m1, m0, n0 = y[-4:]
            m, n, batch = m1 * m0, n1 * n0, prod(y[:-4])
        else:
            m, n, batch = y[-2], y[-1], prod(y[:-2])
        k_dims = 4 if infmt[:1] == ['FRACTAL_NZ'] else 2
        a = prod(x1[-k_dims:])
        if a % m:
            return None
        return 'matmul', 2 * batch * m * n * (a // m)
    if op in ('Conv2D', 'Conv2DBackpropInput', 'Conv2DBackpropFilter'):
        if op == 'Conv2D':
            act, fmt, filt = outs[0], outfmt[0], ins[1]
        elif op == 'Conv2DBackpropInput':
            act, fmt, filt = ins[2], infmt[2], ins[1]
        else:
            act, fmt, filt = ins[2], infmt[2], outs[0]
        if fmt in ('NC1HWC0', 'NCHW'):
            nhw = act[0] * act[2] * act[3]
        elif fmt == 'NHWC':
            nhw = act[0] * act[1] * act[2]
        else:
            return None
        return 'conv', 2 * nhw * prod(filt)
    return None


INFER = ('IncreFlashAttention', 'PromptFlashAttention', 'FusedInferAttentionScore', 'PagedAttention')


def causal_pairs(sq, skv):
    # Bottom-right aligned: query row i sees keys 0 .. i + skv - sq (clamped to [0, skv]).
    return sum(min(max(i + skv - sq + 1, 0), skv) for i in range(sq))


def dense_lengths(decode, q, k, extra):
    if len(q) == 4:
        readings = [(q[1], q[2], k[1], k[2]), (q[2], q[1], k[2], k[1])]  # BNSD, BSND
        fit = [r for r in readings if q[0] == k[0] and r[2] and r[0] % r[2] == 0 and (not decode or r[1] == 1)]
        if len({(r[1], r[3]) for r in fit}) == 1:
            return fit[0][1], fit[0][3]
        seen = [r for r in fit if any(e in ([r[1], r[3]], [q[0], 1, r[1], r[3]], [1, 1, r[1], r[3]],
                                            [q[0], r[1], r[3]], [q[0], r[0], r[1], r[3]],
                                            [q[0], r[0], r[1], 1]) and e != [2048, 2048] for e in extra)]
        return (seen[0][1], seen[0][3]) if len(seen) == 1 else None
    if len(q) == 3 and q[0] == k[0] and q[2] % k[2] == 0 and not (q[2] == k[2] and q[1] % k[1] == 0 and not decode):
        return q[1], k[1]  # BSH (and not also a TND reading)
    return None


def infer_attention(op, ins, dts, outs):
    q, k, v = ins[0], ins[1], ins[2]
    per_key = lambda kk, vv, rope: prod(q) * (prod(kk) + prod(vv)) // prod(kk) + rope
    if op.startswith('PagedAttention'):  # ascendtb: query, keyCache [nb, bs, N, D], valueCache, blockTables
        return 2 * ins[3][1] * k[1] * per_key(k, v, 0)
    rest = list(zip(ins[3:], dts[3:]))
    qr = [i for i, (s, t) in enumerate(rest) if t == dts[0] and len(s) == len(q) and s[:-1] == q[:-1]]
    kr = [i for i, (s, t) in enumerate(rest) if t == dts[1] and len(s) == len(k) and s[:-1] == k[:-1]]
    rope = prod(rest[qr[0]][0]) if qr and any(i > qr[0] for i in kr) else 0
    bt = [s for s, t in rest if t == 'INT32' and len(s) == 2]
    if bt and not op.startswith('PromptFlashAttention'):
        bs = {3: k[1], 4: k[2], 5: k[3]}[len(k)]
        return 2 * bt[0][1] * bs * per_key(k, v, rope)
    lengths = dense_lengths(op.startswith('IncreFlashAttention'), q, k, [s for s, _ in rest] + outs[1:])
    if lengths is None:
        return None
    sq, skv = lengths
    pairs = causal_pairs(sq, skv) if any(s == [2048, 2048] for s, _ in rest) else sq * skv
    return 2 * pairs * per_key(k, v, rope) // sq


def add(fams, fam, flops, ns, calls=1):
    f = fams.setdefault(fam, {'calls': 0, 'time_ns': 0, 'flops': 0})
    f['calls'] += calls
    f['time_ns'] += ns
    f['flops'] += flops


def db(path):
    c = sqlite3.connect(f'file:{path}?immutable=1', uri=True)
    s = dict(c.execute('select id, value from STRING_IDS'))
    fams = {}
    q = ('select c.opType, c.inputShapes, c.inputFormats, c.outputShapes, c.outputFormats, '
         't.endNs - t.startNs from COMPUTE_TASK_INFO c join TASK t using (globalTaskId)')
    for op, ish, ifm, osh, ofm, ns in c.execute(q):
        r = ascend_flops(s.get(op, ''), shapes(s.get(ish)), items(s.get(ifm)),
                         shapes(s.get(osh)), items(s.get(ofm)))
        if r:
            add(fams, r[0], r[1], ns)
    return fams


def kernel_csv(path, timeline=None):
    fams = {}
    for x in csv.DictReader(open(path, newline='')):
        if x.get('Accelerator Core') in ('HCCL', 'COMMUNICATION'):
            continue
        r = ascend_flops(x.get('Type', ''), shapes(x.get('Input Shapes')), items(x.get('Input Formats')),
                         shapes(x.get('Output Shapes')), items(x.get('Output Formats')),
                         items(x.get('Input Data Types')))
        if not r:
            continue
        if timeline is None:
            ns = int(Decimal(x['Duration(us)'].strip()) * 1000)
        else:
            ns = timeline[(x['Start Time(us)'].strip(), x['Name'])]
        add(fams, r[0], r[1], ns)
    return fams


def text_export(path):
    trace = json.load(open(path.replace('kernel_details.csv', 'trace_view.json')))
    ev = trace if isinstance(trace, list) else trace['traceEvents']
    half_up = lambda d: int((Decimal(str(d)) * 1000).quantize(Decimal(1), rounding=ROUND_HALF_UP))
    timeline = {(str(e['ts']), e['name']): half_up(e['dur']) for e in ev if e.get('ph') == 'X'}
    return kernel_csv(path, timeline)


def gemm_flops(name, dims):
    op = name.split('::')[-1]
    try:
        if op in ('mm', 'addmm'):
            a, b = (dims[0], dims[1]) if op == 'mm' else (dims[1], dims[2])
            return 2 * a[0] * a[1] * b[1]
        if op in ('bmm', 'baddbmm'):
            a, b = (dims[0], dims[1]) if op == 'bmm' else (dims[1], dims[2])
            return 2 * a[0] * a[1] * a[2] * b[2]
        if op == 'linear':
            x, w = dims[0], dims[1]
            return 2 * prod(x[:-1]) * w[0] * x[-1]
        if op == 'matmul':
            a, b = dims[0], dims[1]
            m, k = (1, a[0]) if len(a) == 1 else (a[-2], a[-1])
            n = 1 if len(b) == 1 else b[-1]
            ba, bb = a[:-2], b[:-2]
            nd = max(len(ba), len(bb))
            ba, bb = [1] * (nd - len(ba)) + ba, [1] * (nd - len(bb)) + bb
            return 2 * prod(max(x, y) for x, y in zip(ba, bb)) * m * n * k
    except (IndexError, TypeError):
        return None
    return None


GEMMS = {'aten::mm', 'aten::addmm', 'aten::bmm', 'aten::baddbmm', 'aten::matmul', 'aten::linear'}


def us_ns(v):
    return int(Decimal(str(v)) * 1000)


def kineto(path):
    opener = gzip.open if path.endswith('.gz') else open
    d = json.load(opener(path, 'rt'))
    ev = d if isinstance(d, list) else d['traceEvents']
    gemms, launch = {}, {}
    for e in ev:
        if e.get('ph') != 'X':
            continue
        a = e.get('args') or {}
        key = (e.get('pid'), e.get('tid'))
        if e.get('cat') == 'cpu_op' and e.get('name') in GEMMS and 'Input Dims' in a:
            s = us_ns(e['ts'])
            gemms.setdefault(key, []).append((s, s + us_ns(e['dur']), e['name'], a['Input Dims']))
        elif e.get('cat') in ('cuda_runtime', 'cuda_driver') and 'correlation' in a:
            s = us_ns(e['ts'])
            launch.setdefault(a['correlation'], (key, s, s + us_ns(e['dur'])))
    outer = {}
    for key, ops in gemms.items():
        ops.sort(key=lambda o: (o[0], -o[1]))
        kept = []
        for o in ops:
            if not kept or o[0] >= kept[-1][1]:
                kept.append(o)
        outer[key] = kept
    fams, seen = {}, set()
    for e in ev:
        a = e.get('args') or {}
        if e.get('ph') != 'X' or e.get('cat') != 'kernel' or a.get('correlation') not in launch:
            continue
        key, s, t = launch[a['correlation']]
        op = next((o for o in outer.get(key, []) if o[0] <= s and t <= o[1]), None)
        if op is None:
            continue
        flops = gemm_flops(op[2], op[3])
        if flops is None:
            continue
        first = (key, op[0], op[1]) not in seen
        seen.add((key, op[0], op[1]))
        add(fams, 'matmul', flops if first else 0, us_ns(e['dur']), 1 if first else 0)
    return fams


if __name__ == '__main__':
    kind, path = sys.argv[1], sys.argv[2]
    print(json.dumps({'db': db, 'csv': kernel_csv, 'text': text_export, 'kineto': kineto}[kind](path), sort_keys=True))
