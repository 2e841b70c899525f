"""docs/scale.md's PySpark job (python/examples/spark_analyze.py) on real shared roots and the
generated demo: one row per root, each equal to what profscope.analyze says of that root. Runs
when pyspark and a JDK (java on PATH) are present; otherwise one SKIPPED line."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import profscope

REPO = Path(__file__).resolve().parents[2]
SAMPLES = REPO.parent / "shared" / "samples"
ROOTS = [
    SAMPLES / "ascend-pt/db/level1",
    SAMPLES / "ascend-pt/text/level1",
    SAMPLES / "ascend-msprof-legacy",
    REPO / "fixtures/demo",
]


def test_spark_job_writes_one_row_per_root(tmp_path):
    try:
        import pyspark  # noqa: F401
    except ImportError:
        pytest.skip("SKIPPED PySpark job of docs/scale.md: pyspark is not installed (pip install pyspark)")
    if shutil.which("java") is None:
        pytest.skip("SKIPPED PySpark job of docs/scale.md: no JDK (java) on PATH")
    import pyarrow.parquet as pq

    out = tmp_path / "summaries"
    subprocess.run(
        [sys.executable, str(REPO / "python/examples/spark_analyze.py"), str(out), *map(str, ROOTS)],
        check=True,
        timeout=600,
    )
    rows = {r["root"]: r for r in pq.read_table(out).to_pylist()}
    assert set(rows) == {str(r) for r in ROOTS}
    for root in ROOTS:
        got = rows[str(root)]
        r = profscope.analyze(str(root), cache=False)
        dt = r.json["analyses"]["device_time"]
        assert got["error"] is None
        assert got["verdict"] == r.verdict["status"]
        assert got["devices"] == len(dt)
        assert got["window_ns"] == sum(d["window_ns"] for d in dt)
        assert got["free_ns"] == sum(d["free_ns"] for d in dt)
        assert got["headline"] == r.headline[0]
        findings = r.json["analyses"]["advisor"]["findings"]
        assert got["top_rule"] == (findings[0]["rule"] if findings else None)
