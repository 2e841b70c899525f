#!/usr/bin/env python3
"""Runs Holistic Trace Analysis 0.5.0 on the real Kineto traces in shared/samples/torch-traces and
prints idle-time share and kernel-type shares per rank, as JSON. Used once to record oracle values
for profscope's tests/it/hta_agreement.rs."""
import json, sys, warnings, logging
warnings.filterwarnings("ignore")
logging.disable(logging.CRITICAL)
from hta.trace_analysis import TraceAnalysis
out = {}
for d in sys.argv[1:]:
    a = TraceAnalysis(trace_dir=d)
    tb = a.get_temporal_breakdown(visualize=False)
    kt, _ = a.get_gpu_kernel_breakdown(visualize=False, duration_ratio=1.0, num_kernels=1000, include_memory_kernels=True)
    out[d] = {"temporal": json.loads(tb.to_json(orient="records")), "kernel_type": json.loads(kt.to_json(orient="records"))}
print(json.dumps(out, indent=1))
