#!/usr/bin/env python3
"""Runs msprof-analyze (Huawei's peer tool, PyPI `msprof-analyze`) on the real db root and records
its numbers for tests/it/msprof_analyze_agreement.rs. Test-time helper only; run by hand:

    python3 -m venv /tmp/msa-venv && /tmp/msa-venv/bin/pip install msprof-analyze==26.2.0
    python3 tests/tools/run_msprof_analyze.py /tmp/msa-venv/bin/msprof-analyze \
        ../shared/samples/ascend-pt/db/level1 > tests/expected/msprof_analyze_26.2.0.json

    # host API statistics (tests/it/dispatch.rs), one file per root:
    for l in 0 1 2; do python3 tests/tools/run_msprof_analyze.py --modes cann_api_sum \
        /tmp/msa-venv/bin/msprof-analyze ../shared/samples/ascend-pt/db/level$l \
        > tests/expected/msprof_analyze_26.2.0_cann_api_sum_level$l.json; done

    # communication depth (tests/it/communication_ops.rs), one file per root:
    for l in 0 1 2; do python3 tests/tools/run_msprof_analyze.py \
        --modes communication_time,communication_matrix /tmp/msa-venv/bin/msprof-analyze \
        ../shared/samples/ascend-pt/db/level$l \
        > tests/expected/msprof_analyze_26.2.0_communication_level$l.json; done

The root is copied to a temporary folder first (msprof-analyze is given the folder layout of the
sample as it is; the copy keeps the sample untouched). For each mode it runs
`msprof-analyze cluster -d <copy> -m <mode> -o <out>` and dumps the tables of
`<out>/cluster_analysis_output/cluster_analysis.db` that the test compares.
"""
import json
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

MODES = {
    "compute_op_sum": ["ComputeOpPerRankStatsByOpType"],
    "hccl_sum": ["HcclPerRankStats", "HcclTopOpStats"],
    "cluster_time_summary": ["ClusterTimeSummary"],
}
# Modes run only when named with --modes.
EXTRA_MODES = {
    "cann_api_sum": ["CannApiSumRank"],
    "communication_time": ["ClusterCommunicationTime", "ClusterCommunicationBandwidth"],
    "communication_matrix": ["ClusterCommunicationMatrix"],
}


def main():
    args = sys.argv[1:]
    modes = MODES
    if args[0] == "--modes":
        wanted = args[1].split(",")
        modes = {m: {**MODES, **EXTRA_MODES}[m] for m in wanted}
        args = args[2:]
    exe, root = args[0], Path(args[1])
    banner = subprocess.run([exe, "-V"], capture_output=True, text=True)
    version = next(
        (l.strip() for l in (banner.stdout + banner.stderr).splitlines() if l.startswith("msprof-analyze ")),
        "unknown",
    )
    out = {"tool": "msprof-analyze", "version": version, "root": str(root), "modes": {}}
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / root.name
        shutil.copytree(root, data)
        for mode, tables in modes.items():
            dest = Path(tmp) / f"out_{mode}"
            cmd = [exe, "cluster", "-d", str(data), "-m", mode, "-o", str(dest)]
            t0 = time.time()
            subprocess.run(cmd, check=True, capture_output=True)
            secs = time.time() - t0
            db = sqlite3.connect(dest / "cluster_analysis_output" / "cluster_analysis.db")
            db.row_factory = sqlite3.Row
            present = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
            out["modes"][mode] = {
                "command": f"msprof-analyze cluster -d <copy of {root}> -m {mode} -o <out>",
                "wall_s": round(secs, 2),
                "tables": {
                    t: [dict(r) for r in db.execute(f"SELECT * FROM {t} ORDER BY 1, 2")]
                    if t in present
                    else None
                    for t in tables
                },
            }
    json.dump(out, sys.stdout, indent=1, sort_keys=True)
    print()


if __name__ == "__main__":
    main()
