"""The Python package against the CLI on the real shared samples (../shared/samples, read-only).

Inputs are real captures unless said: ascend-pt db/text roots (torch_npu, 2 ranks), a legacy CANN
msprof root, a Kineto trace, npu-smi text. The CLI is the release binary the same build made
(PROFSCOPE_BIN, else ../target or $CARGO_TARGET_DIR/release/profscope). Expected values come from
the CLI's own JSON, or are counted here independently (sqlite3, csv, json) as each test says.
"""

import csv
import json
import os
import sqlite3
import subprocess
import threading
import time
from pathlib import Path

import pytest

import profscope

REPO = Path(__file__).resolve().parents[2]
SAMPLES = REPO.parent / "shared" / "samples"
TIMERS = ("ingest_ms", "analysis_ms", "wall_ms")


def cli_bin() -> str:
    if os.environ.get("PROFSCOPE_BIN"):
        return os.environ["PROFSCOPE_BIN"]
    target = os.environ.get("CARGO_TARGET_DIR", str(REPO / "target"))
    return str(Path(target) / "release" / "profscope")


def cli_json(*args: str) -> dict:
    out = subprocess.run([cli_bin(), *args], capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def untimed(report: dict) -> dict:
    return {k: v for k, v in report.items() if k not in TIMERS}


ROOTS = [
    "ascend-pt/db/level1",
    "ascend-pt/text/level1",
    "ascend-pt/text/level0",
    "ascend-msprof-legacy",
    "torch-traces/nccl_parser_config",
]


@pytest.mark.parametrize("root", ROOTS)
def test_analyze_json_is_the_cli_json(root):
    path = str(SAMPLES / root)
    r = profscope.analyze(path, cache=False)
    cli = cli_json("analyze", "--format", "json", "--quiet", "--no-cache", path)
    assert untimed(r.json) == untimed(cli)
    assert r.headline == cli["headline"]
    assert r.verdict == cli["verdict"]
    # Every table builds, and the ones with rows have columns.
    for name in profscope.Report.tables():
        t = r.table(name)
        assert t.num_rows == len(r.rows(name))


def test_options_reach_the_pipeline():
    path = str(SAMPLES / "ascend-pt/db/level1")
    r = profscope.analyze(path, only=["bubbles", "advisor"], min_gap_us=5, top=3, cache=False)
    cli = cli_json(
        "analyze", "--format", "json", "--quiet", "--no-cache", "--only", "bubbles,advisor",
        "--min-gap-us", "5", "--top", "3", path,
    )
    assert untimed(r.json) == untimed(cli)
    assert r.json["analyses"]["bubbles"][0]["min_gap_ns"] == 5000
    assert len(r.json["analyses"]["bubbles"][0]["largest"]) == 3


def test_expected_ranks_phase_and_a_cache_folder(tmp_path):
    """expected_ranks names the missing ranks (the root holds ranks 0 and 1); phase slices as the
    CLI's --phase; a cache folder is filled and read back with the same report."""
    path = str(SAMPLES / "ascend-pt/db/level1")
    r = profscope.analyze(path, expected_ranks=4, cache=False)
    assert r.json["analyses"]["ranks"]["missing"] == [2, 3]
    demo = str(REPO / "fixtures/demo")
    p = profscope.analyze(demo, phase="decode", cache=False)
    cli = cli_json("analyze", "--format", "json", "--quiet", "--no-cache", "--phase", "decode", demo)
    assert untimed(p.json) == untimed(cli)
    assert p.json["phase_slice"]["events_kept"] > 0
    first = profscope.analyze(path, cache=tmp_path / "cache")
    assert any((tmp_path / "cache").iterdir())
    again = profscope.analyze(path, cache=tmp_path / "cache")
    codes = lambda r: {d["code"] for d in r.json["diagnostics"]}
    assert "cache_miss" in codes(first) and "cache_hit" in codes(again)
    assert first.json["analyses"] == again.json["analyses"]
    assert first.headline == again.headline


def test_tables_hold_the_report_numbers_db_level1():
    """Tables equal the JSON they come from; the advisor's byte-alignment finding carries the
    number tests/it/advisor.rs checks against msprof-analyze (240.505 µs abnormal on rank 0)."""
    r = profscope.analyze(str(SAMPLES / "ascend-pt/db/level1"), cache=False)
    dt = r.table("device_time").to_pylist()
    for row, d in zip(dt, r.json["analyses"]["device_time"]):
        assert row["device_rank"] == d["device"]["rank"]
        assert row["free_ns"] == d["free_ns"]
        assert row["computing_ns"] + row["communication_not_overlapped_ns"] + row["free_ns"] == pytest.approx(
            row["window_ns"], abs=2
        )
    causes = r.table("bubble_causes").to_pandas()
    for b in r.json["analyses"]["bubbles"]:
        mine = causes[causes.device_rank == b["device"]["rank"]]
        assert int(mine.total_ns.sum()) == sum(c["total_ns"] for c in b["by_cause"].values())
    findings = r.table("advisor_findings").to_pylist()
    assert [f["rule"] for f in findings] == [f["rule"] for f in r.json["analyses"]["advisor"]["findings"]]
    ba = [f for f in findings if f["rule"] == "byte_alignment"][0]
    assert any("hcom_allReduce__210_0_1" in e and "unaligned 3874624 bytes in 240.5050 µs" in e for e in ba["evidence"])


def test_efficiency_table_with_peaks_matches_sqlite_flops():
    """table("efficiency") on the real db root with --peak-tflops / --peak-gbps given (the db has no
    chip facts): its conv rows' FLOPs add up to 2·N·Ho·Wo·(filter elements) over the Conv2D*
    tasks of COMPUTE_TASK_INFO (read with sqlite3), per rank; MFU = achieved / 300 TFLOPS."""
    r = profscope.analyze(str(SAMPLES / "ascend-pt/db/level1"), cache=False, only=["efficiency"],
                          peak_tflops=300, peak_gbps=1600)
    rows = r.table("efficiency").to_pylist()
    assert rows and {"op", "flops", "mfu", "roofline", "time_lost_ns", "device_rank"} <= set(rows[0])
    for rank in (0, 1):
        con = ro(db_of(rank))
        s = dict(con.execute("SELECT id, value FROM STRING_IDS"))
        want = 0
        for op, ish, osh in con.execute("SELECT opType, inputShapes, outputShapes FROM COMPUTE_TASK_INFO"):
            op = s.get(op, "")
            if not op.startswith("Conv2D"):
                continue
            ins = [[int(d) for d in t.split(",")] if t else [] for t in s[ish].strip('"').split(";")]
            outs = [[int(d) for d in t.split(",")] if t else [] for t in s[osh].strip('"').split(";")]
            act, filt = (outs[0], ins[1]) if op == "Conv2D" else (ins[2], ins[1] if op == "Conv2DBackpropInput" else outs[0])
            n = 1
            for d in filt:
                n *= d
            want += 2 * act[0] * act[2] * act[3] * n
        mine = [x for x in rows if x["device_rank"] == rank and x["family"] == "conv"]
        assert sum(x["flops"] for x in mine) == want
        for x in mine:
            assert x["mfu"] == pytest.approx(x["flops"] / x["time_ns"] / 1e3 / 300, rel=1e-9)
    fams = r.table("efficiency_families").to_pylist()
    assert {f["family"] for f in fams} >= {"matmul", "conv"}


def test_collective_ops_match_sqlite_counts():
    """collective_ops lists, per device, the slowest ops; their names are ops of that rank's
    COMMUNICATION_OP table (counted with sqlite3)."""
    r = profscope.analyze(str(SAMPLES / "ascend-pt/db/level1"), cache=False)
    ops = r.table("collective_ops").to_pylist()
    assert ops
    for rank in (0, 1):
        con = ro(db_of(rank))
        names = {v for (v,) in con.execute(
            "SELECT s.value FROM COMMUNICATION_OP c JOIN STRING_IDS s ON s.id = c.opName")}
        mine = [o for o in ops if o["device_rank"] == rank]
        assert mine and all(o["name"] in names for o in mine), (rank, mine[:1], sorted(names)[:3])


def test_load_events_match_the_kernel_csv_rows():
    """load() of a CSV-only export: one event per kernel_details.csv row (counted with csv)."""
    folder = SAMPLES / "ascend-pt/text/level0/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/kernel_details.csv"
    with open(folder, newline="") as f:
        rows = sum(1 for _ in csv.DictReader(f))
    t = profscope.load(str(folder))
    assert t.events.num_rows == rows
    assert set(t.events.column_names) >= {"name", "ts_ns", "dur_ns", "category", "file_rank"}


def db_of(rank: int) -> Path:
    return SAMPLES / f"ascend-pt/db/level1/rank{rank}_ascend_pt/ASCEND_PROFILER_OUTPUT/ascend_pytorch_profiler_{rank}.db"


def ro(db: Path) -> sqlite3.Connection:
    return sqlite3.connect(f"file:{db}?mode=ro&immutable=1", uri=True)


def overlap_rows(db: Path) -> int:
    con = ro(db)
    has = con.execute("SELECT count(*) FROM sqlite_master WHERE name = 'OVERLAP_ANALYSIS'").fetchone()[0]
    return con.execute("SELECT count(*) FROM OVERLAP_ANALYSIS").fetchone()[0] if has else 0


def test_load_matches_sqlite_and_the_report():
    """load() of the real db root against sqlite3 over the same files: STEP_TIME rows as steps,
    TASK_PMU_INFO tasks with ratios in op_metrics, COMMUNICATION_TASK_INFO rows as comm_tasks;
    events = the report's events plus the vendor's OVERLAP_ANALYSIS rows (analyze reads those as
    per-device sums; 382 on rank 0)."""
    path = str(SAMPLES / "ascend-pt/db/level1")
    t = profscope.load(path)
    summary = cli_json("analyze", "--format", "json", "--quiet", "--no-cache", path)["summary"]
    overlap = sum(overlap_rows(db_of(r)) for r in (0, 1))
    assert overlap == 382
    assert t.events.num_rows == summary["events"] + overlap
    steps = sorted(zip(t.steps["rank"].to_pylist(), t.steps["step"].to_pylist(),
                       t.steps["start_ns"].to_pylist(), t.steps["end_ns"].to_pylist()))
    want = sorted((r, *row) for r in (0, 1) for row in ro(db_of(r)).execute("SELECT id, startNs, endNs FROM STEP_TIME"))
    assert steps == want
    pmu = sum(ro(db_of(r)).execute("SELECT count(DISTINCT globalTaskId) FROM TASK_PMU_INFO").fetchone()[0] for r in (0, 1))
    assert t.op_metrics.num_rows == pmu == 370
    comm = sum(ro(db_of(r)).execute("SELECT count(*) FROM COMMUNICATION_TASK_INFO").fetchone()[0] for r in (0, 1))
    assert t.comm_tasks.num_rows == comm
    assert sorted(t.files["rank"].to_pylist()) == [0, 1]
    # The ratios as the db holds them (rank 0, the aiv_vec_ratio of one task).
    r0 = ro(db_of(0))
    gid, value = r0.execute(
        "SELECT p.globalTaskId, p.value FROM TASK_PMU_INFO p JOIN STRING_IDS s ON s.id = p.name "
        "WHERE s.value = 'aiv_vec_ratio' AND p.value > 0 ORDER BY p.globalTaskId LIMIT 1").fetchone()
    name, = r0.execute("SELECT s.value FROM COMPUTE_TASK_INFO c JOIN STRING_IDS s ON s.id = c.name WHERE c.globalTaskId = ?", (gid,)).fetchone()
    mine = t.op_metrics.filter(__import__("pyarrow.compute").compute.equal(t.op_metrics["rank"], 0)).to_pylist()
    assert any(m["name"] == name and abs(m["aiv_vec_ratio"] - value) < 1e-6 for m in mine)


def test_diff_passes_and_fails_as_the_cli():
    base = str(REPO / "fixtures/demo")
    new = str(SAMPLES / "ascend-pt/db/level1")
    d = profscope.diff(base, new)
    assert d.passed
    assert {"findings", "rows", "summary"} <= set(d.json)
    gone = {f["rule"] for f in d.json["findings"]["gone"]}
    assert "graph_replay_gaps" in gone
    failed = profscope.diff(base, new, fail_on="step_time>+0%")
    cli = subprocess.run([cli_bin(), "diff", "--quiet", "--format", "json", "--fail-on", "step_time>+0%", base, new],
                         capture_output=True, text=True)
    assert failed.passed == (cli.returncode == 0)
    assert failed.json["gate"] == json.loads(cli.stdout)["gate"]


def test_memory_is_the_cli_json():
    smi = str(SAMPLES / "npu-smi/triton-ascend-faq_a2-910b4_1card_idle_npu-smi-26.0.rc1_wide.txt")
    m = profscope.memory(smi)
    assert m == cli_json("memory", "--format", "json", smi)


def test_errors_are_exceptions_with_the_cli_message(tmp_path):
    missing = tmp_path / "nope"
    with pytest.raises(profscope.ProfscopeError) as e:
        profscope.analyze(str(missing), cache=False)
    cli = subprocess.run([cli_bin(), "analyze", "--quiet", "--no-cache", str(missing)], capture_output=True, text=True)
    assert cli.returncode == 2
    assert cli.stderr.strip() == f"profscope: error: {e.value}"
    with pytest.raises(profscope.ProfscopeError, match="--only"):
        profscope.analyze(str(SAMPLES / "ascend-pt/db/level1"), only=["no_such_analysis"])
    with pytest.raises(ValueError):
        profscope.analyze()


def test_the_gil_is_released_while_profscope_works(tmp_path):
    """The main thread keeps running Python while analyze() works in another thread (generated
    input: a 60 MB root from `profscope synth`, analysed 3 times without the cache). A held GIL
    would stall the main thread for whole calls; released, its longest pause is a scheduler slice."""
    root = tmp_path / "synth"
    subprocess.run([cli_bin(), "synth", str(root), "--ranks", "1", "--size", "60MB", "--kineto", "false"],
                   check=True, capture_output=True)
    calls = []

    def work():
        for _ in range(3):
            t0 = time.perf_counter()
            profscope.analyze(str(root), cache=False)
            calls.append(time.perf_counter() - t0)

    t = threading.Thread(target=work)
    stamps = []
    t.start()
    while t.is_alive():
        stamps.append(time.perf_counter())
    t.join()
    longest_call = max(calls)
    pause = max(b - a for a, b in zip(stamps, stamps[1:]))
    assert longest_call > 0.03, calls
    assert pause < 0.5 * longest_call, (pause, calls)


def test_to_markdown_is_the_cli_markdown():
    path = str(SAMPLES / "ascend-pt/db/level1")
    md = profscope.analyze(path).to_markdown()
    cli = subprocess.run([cli_bin(), "analyze", "--quiet", "--format", "md", path], capture_output=True, text=True)
    strip = lambda s: [l for l in s.splitlines() if "wall:" not in l and "_ms" not in l and " ms (summed" not in l]
    assert strip(md) == strip(cli.stdout)


def test_brief_fills_the_budget_by_importance():
    """Report.brief: profscope's trimmer over the report (docs/json-output.md "Bounded outputs"),
    sizes measured on the JSON text it wrote; the expected parts are the whole report's."""
    path = str(SAMPLES / "ascend-pt/db/level1")
    r = profscope.analyze(path, cache=False)
    full = r.json
    top3 = [f["statement"] for f in full["analyses"]["advisor"]["findings"][:3]]
    assert len(top3) == 3
    for max_bytes in (2000, 4000, 8000, 16000, 64000):
        b = r.brief(max_bytes)
        text = profscope._profscope.bound("analyze", json.dumps(full, ensure_ascii=False), max_bytes)
        assert json.loads(text) == b
        assert max_bytes * 0.8 <= len(text.encode()) <= max_bytes, (max_bytes, len(text))
        assert b["truncated"] and b["full_bytes"] > max_bytes
        res = b["result"]
        assert res["headline"] == full["headline"]
        for k in ("status", "kind", "statement", "reasons"):
            assert res["verdict"][k] == full["verdict"][k]
        if max_bytes >= 4000:
            kept = [f["statement"] for f in res["analyses"]["advisor"]["findings"]]
            assert kept[:3] == top3
    # The CLI's --max-bytes is the same trimmer: the same verdict, headline and top advice.
    cli = cli_json("analyze", "--format", "json", "--quiet", "--no-cache", "--max-bytes", "8000", path)
    mine = r.brief(8000)
    assert cli["result"]["headline"] == mine["result"]["headline"]
    shares = ("computing_pct_of_window", "communication_not_overlapped_pct_of_window", "free_pct_of_window")
    for side in (cli, mine):
        a = side["result"]["analyses"]
        assert [f["recommendation"] for f in a["advisor"]["findings"][:3]] == [
            f["recommendation"] for f in full["analyses"]["advisor"]["findings"][:3]
        ]
        assert [[d[k] for k in shares] for d in a["device_time"]] == [
            [d[k] for k in shares] for d in full["analyses"]["device_time"]
        ]
    with pytest.raises(profscope.ProfscopeError, match="smallest budget that holds them is"):
        r.brief(1000)
    md = r.to_markdown(max_bytes=4000)
    assert len(md.encode()) <= 4000 and full["verdict"]["statement"] in md


def _tree(root):
    """Every file under root with its bytes (to show a call wrote nothing)."""
    return {p: p.read_bytes() for p in sorted(Path(root).rglob("*")) if p.is_file()}


def test_paths_are_never_options(tmp_path, monkeypatch):
    """Issue 61: paths reach the CLI after `--`. A real trace copied under the name `-rank0.json.gz`
    is analysed (the same report as the original, read by the CLI through `--`); a path spelled
    `--save=<file>` is a path that does not exist (an error naming it), never a --save that
    writes the file; a base spelled `--thresholds=...` is a missing path, not an option."""
    src = SAMPLES / "torch-traces/nccl_parser_config"
    # The sample is nccl_data.json.gz: copied as -rank0.json.gz (the suffix says how to read it).
    trace = sorted(src.glob("*.json*"))[0]
    name = "-rank0" + "".join(trace.suffixes)
    monkeypatch.chdir(tmp_path)
    Path(name).write_bytes(trace.read_bytes())
    r = profscope.analyze(name, cache=False)
    cli = cli_json("analyze", "--format", "json", "--quiet", "--no-cache", "--", name)
    assert untimed(r.json) == untimed(cli)
    assert r.json["summary"]["files"][0]["path"].endswith(name)
    md = subprocess.run([cli_bin(), "analyze", "--quiet", "--no-cache", "--format", "md", "--", name],
                        capture_output=True, text=True, check=True).stdout
    strip = lambda s: [l for l in s.splitlines() if "wall:" not in l and "_ms" not in l and " ms (summed" not in l]
    assert strip(r.to_markdown()) == strip(md)

    before = _tree(tmp_path)
    target = tmp_path / "x.json"
    with pytest.raises(profscope.ProfscopeError, match="--save="):
        profscope.analyze(f"--save={target}", str(SAMPLES / "ascend-pt/db/level1"), cache=False)
    assert not target.exists()
    with pytest.raises(profscope.ProfscopeError, match="--thresholds="):
        profscope.diff(str(SAMPLES / "ascend-pt/db/level1"), f"--thresholds={target}")
    with pytest.raises(profscope.ProfscopeError, match="--save="):
        profscope.memory(f"--save={target}")
    assert _tree(tmp_path) == before


def test_option_values_that_look_like_options_stay_values():
    """A keyword value starting with `-` is the option's value (`--phase=-x`), refused by the
    CLI's own check of that value, and never taken as another option."""
    path = str(SAMPLES / "ascend-pt/db/level1")
    with pytest.raises(profscope.ProfscopeError, match="-x"):
        profscope.analyze(path, phase="-x", cache=False)
    with pytest.raises(profscope.ProfscopeError, match="--save"):
        profscope.diff(path, path, fail_on="--save=/tmp/x.json")
