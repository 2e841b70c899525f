"""profscope in Python: accelerator profiles (Ascend NPU torch_npu / msprof roots, PyTorch Kineto
traces) into answers, with the CLI's numbers.

Every call runs the same pipeline as the ``profscope`` command line, in this process, with the
GIL released (docs/python.md)::

    import profscope
    r = profscope.analyze("path/to/profiling_root")
    print("\\n".join(r.headline))
    r.table("bubble_gaps").to_pandas()

``Report.json`` is exactly what ``profscope analyze --format json`` prints (schema in
docs/json-output.md); ``Report.table(name)`` turns one part of it into a ``pyarrow.Table``.
"""

from __future__ import annotations

import json as _json
import os
from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence, Union

from ._profscope import ProfscopeError, __version__, bound as _bound, load_tables as _load_tables, run as _run

__all__ = [
    "analyze",
    "load",
    "diff",
    "memory",
    "Report",
    "Tables",
    "Diff",
    "ProfscopeError",
    "__version__",
]

PathLike = Union[str, "os.PathLike[str]"]


def _paths(paths: Iterable[PathLike]) -> List[str]:
    out = [os.fspath(p) for p in paths]
    if not out:
        raise ValueError("give at least one path (a profiling root, rank folder or file)")
    return out


def _opt(name: str, value: Any) -> str:
    """One option with its value in a single argument (``--name=value``), so a value that starts
    with ``-`` is never read as another option."""
    return f"--{name}={value}"


def _cli(command: str, options: List[str], paths: Sequence[str]) -> "tuple[str, int]":
    """Runs ``profscope <command> <options> -- <paths>`` in-process; raises ProfscopeError with
    the CLI's message. Paths come after ``--``: a file named ``-rank0.json`` or ``--save=x`` is
    a path, never an option, and options come only from keyword arguments."""
    for o in options:
        if not o.startswith("--"):
            raise ValueError(f"not an option: {o!r}")
    return _run([command, *options, "--", *paths])


# --- flattening report parts into rows -------------------------------------------------------


def _flat(row: Dict[str, Any], prefix: str = "") -> Dict[str, Any]:
    """One record: nested objects become ``parent_child`` columns; lists of scalars stay lists;
    lists of objects are left out (each has a table of its own)."""
    out: Dict[str, Any] = {}
    for k, v in row.items():
        name = f"{prefix}{k}"
        if isinstance(v, dict):
            out.update(_flat(v, name + "_"))
        elif isinstance(v, list):
            if all(not isinstance(x, (dict, list)) for x in v):
                out[name] = v
        else:
            out[name] = v
    return out


def _each(items: Iterable[Dict[str, Any]], **outer: Any) -> List[Dict[str, Any]]:
    rows = []
    for it in items:
        r = dict(outer)
        r.update(_flat(it))
        rows.append(r)
    return rows


def _device(d: Dict[str, Any]) -> Dict[str, Any]:
    return {f"device_{k}": v for k, v in (d.get("device") or {}).items()}


def _per_device(key: str) -> Callable[[Dict[str, Any]], List[Dict[str, Any]]]:
    return lambda r: _each(r["analyses"].get(key) or [])


def _nested(key: str, child: str) -> Callable[[Dict[str, Any]], List[Dict[str, Any]]]:
    def rows(r: Dict[str, Any]) -> List[Dict[str, Any]]:
        out: List[Dict[str, Any]] = []
        for d in r["analyses"].get(key) or []:
            items = d.get(child) or []
            if isinstance(items, dict):
                items = [dict(v, **{"name": k}) if isinstance(v, dict) else {"name": k, "value": v}
                         for k, v in items.items()]
            out.extend(_each(items, **_device(d)))
        return out

    return rows


def _collective_ops(r: Dict[str, Any]) -> List[Dict[str, Any]]:
    out: List[Dict[str, Any]] = []
    for d in (r["analyses"].get("communication_ops") or {}).get("devices") or []:
        out.extend(_each(d.get("slowest") or [], **_device(d)))
    return out


def _cross_rank_ranks(r: Dict[str, Any]) -> List[Dict[str, Any]]:
    out: List[Dict[str, Any]] = []
    for c, cohort in enumerate((r["analyses"].get("cross_rank") or {}).get("cohorts") or []):
        out.extend(_each(cohort.get("ranks") or [], cohort=c))
    return out


def _cross_rank_steps(r: Dict[str, Any]) -> List[Dict[str, Any]]:
    """Per cohort, rank and step: the per-step samples cross_rank keeps (first 4,096 steps)."""
    out: List[Dict[str, Any]] = []
    for c, cohort in enumerate((r["analyses"].get("cross_rank") or {}).get("cohorts") or []):
        for rank in cohort.get("ranks") or []:
            s = rank.get("samples") or {}
            cols = [k for k, v in s.items() if isinstance(v, list)]
            n = max((len(s[k]) for k in cols), default=0)
            for i in range(n):
                row: Dict[str, Any] = {"cohort": c, **_device(rank), "step_index": i}
                for k in cols:
                    row[k] = s[k][i] if i < len(s[k]) else None
                out.append(row)
    return out


_TABLES: Dict[str, "tuple[str, Callable[[Dict[str, Any]], List[Dict[str, Any]]]]"] = {
    "device_time": ("busy, free and overlap time per device (analyses.device_time)", _per_device("device_time")),
    "kernel_types": ("kernel time by class per device (analyses.kernel_types[].classes)", _nested("kernel_types", "classes")),
    "bubbles": ("idle summary per device (analyses.bubbles)", _per_device("bubbles")),
    "bubble_gaps": ("the largest idle gaps with their cause (analyses.bubbles[].largest)", _nested("bubbles", "largest")),
    "bubble_causes": ("idle time per cause and device (analyses.bubbles[].by_cause)", _nested("bubbles", "by_cause")),
    "composition": ("compute kernels by family per device (analyses.composition[].families)", _nested("composition", "families")),
    "op_types": ("device time per operator type (analyses.op_types[].rows)", _nested("op_types", "rows")),
    "efficiency": ("FLOPs, bytes, MFU and roofline class per op class and device (analyses.efficiency[].ops)", _nested("efficiency", "ops")),
    "efficiency_families": ("the same sums per op family and device (analyses.efficiency[].families)", _nested("efficiency", "families")),
    "top_events": ("the device events with the largest summed time (analyses.top_events[].by_sum)", _nested("top_events", "by_sum")),
    "collective_ops": ("the slowest collective ops per device (analyses.communication_ops.devices[].slowest)", _collective_ops),
    "cross_rank_ranks": ("per rank of each cohort (analyses.cross_rank.cohorts[].ranks)", _cross_rank_ranks),
    "cross_rank_steps": ("per rank and step: step, computing, exposed communication and free time (cross_rank samples)", _cross_rank_steps),
    "ranks": ("every rank the run holds (analyses.ranks.rows)", lambda r: _each((r["analyses"].get("ranks") or {}).get("rows") or [])),
    "evidence": ("what each file holds as evidence (analyses.evidence)", _per_device("evidence")),
    "layout_ranks": ("each rank's place in the job: stage, replica, shard, expert index (analyses.layout.ranks)",
                     lambda r: _each(((r["analyses"].get("layout") or {}).get("ranks")) or [])),
    "peer_comparisons": ("comparisons within peer sets and TP groups (analyses.layout.comparisons)",
                         lambda r: _each(((r["analyses"].get("layout") or {}).get("comparisons")) or [])),
    "pipeline_stages": ("per pipeline stage: computing, receive wait, send per step (analyses.layout.pipeline.per_stage)",
                        lambda r: _each((((r["analyses"].get("layout") or {}).get("pipeline")) or {}).get("per_stage") or [])),
    "expert_ranks": ("tokens and GroupedMatmul time per rank of each EP group (analyses.layout.experts[].ranks)",
                     lambda r: [row for g in ((r["analyses"].get("layout") or {}).get("experts") or [])
                                for row in _each(g.get("ranks") or [], group=g.get("group"))]),
    "advisor_findings": ("the advisor's findings, largest time at stake first (analyses.advisor.findings)",

                         lambda r: _each((r["analyses"].get("advisor") or {}).get("findings") or [])),
    "diagnostics": ("what was skipped or read lossily, and why (diagnostics)", lambda r: _each(r.get("diagnostics") or [])),
}


def _to_arrow(rows: List[Dict[str, Any]]) -> "Any":
    import pyarrow as pa

    if not rows:
        return pa.table({})
    names: List[str] = []
    for row in rows:
        for k in row:
            if k not in names:
                names.append(k)
    return pa.Table.from_pylist([{k: row.get(k) for k in names} for row in rows])


class Report:
    """The result of :func:`analyze`: the CLI's JSON report and tables built from it."""

    def __init__(self, report: Dict[str, Any], options: List[str], paths: List[str]):
        self._r = report
        self._options = options
        self._paths = paths

    @property
    def json(self) -> Dict[str, Any]:
        """The report as ``profscope analyze --format json`` prints it (docs/json-output.md)."""
        return self._r

    @property
    def headline(self) -> List[str]:
        """The answer first: one line per fact, as the CLI prints them after ``»``."""
        return list(self._r.get("headline") or [])

    @property
    def verdict(self) -> Dict[str, Any]:
        """How sure the report is (status, kind, statement, reasons, coverage; docs/evidence.md)."""
        return dict(self._r.get("verdict") or {})

    @staticmethod
    def tables() -> List[str]:
        """The names :meth:`table` accepts."""
        return list(_TABLES)

    @staticmethod
    def describe_tables() -> Dict[str, str]:
        """Each table name with what it holds and where in the JSON it comes from."""
        return {k: v[0] for k, v in _TABLES.items()}

    def rows(self, name: str) -> List[Dict[str, Any]]:
        """The rows of table ``name`` as dicts (no pyarrow needed)."""
        if name not in _TABLES:
            raise KeyError(f"no table {name!r}; tables: {', '.join(_TABLES)}")
        return _TABLES[name][1](self._r)

    def table(self, name: str) -> "Any":
        """Table ``name`` as a ``pyarrow.Table`` (nested objects flattened to ``a_b`` columns)."""
        return _to_arrow(self.rows(name))

    def brief(self, max_bytes: int = 12000) -> Dict[str, Any]:
        """The report bounded to ``max_bytes`` bytes of JSON, filled by importance as the MCP
        ``analyze`` tool fills it (docs/json-output.md, "Bounded outputs"): the verdict, the
        headline, the advisor's top findings, per-rank device-time shares, cross-rank claims,
        per-analysis summaries, then lists cut from their tails. Returns ``{"schema_version",
        "tool", "truncated", "full_bytes", "result", "cut"}``: ``result`` is the report cut,
        ``cut`` says what went and how to get it. The bound is on profscope's JSON text of that
        dict (compact, UTF-8).

        Raises:
            ProfscopeError: when ``max_bytes`` cannot hold the verdict and the headline (the
                message names the smallest bound that can).
        """
        text = _bound("analyze", _json.dumps(self._r, ensure_ascii=False), int(max_bytes))
        return _json.loads(text)

    def to_markdown(self, full: bool = False, max_bytes: Optional[int] = None) -> str:
        """The Markdown report (the CLI's ``--format md``): ``full`` for every section; with
        ``max_bytes``, the brief filled by importance into that many bytes. Runs the analysis
        again with the same options (a cache hit unless ``cache=False``)."""
        options = [o for o in self._options if not o.startswith("--format=")]
        options.append(_opt("format", "md"))
        if full:
            options.append("--full")
        if max_bytes is not None:
            options.append(_opt("max-bytes", int(max_bytes)))
        return _cli("analyze", options, self._paths)[0]

    def __repr__(self) -> str:
        head = self.headline[:2]
        return f"<profscope.Report {self._r.get('inputs')}: {' | '.join(head)}>"


def analyze(
    *paths: PathLike,
    only: Optional[Sequence[str]] = None,
    min_gap_us: float = 1,
    top: int = 10,
    batch: Optional[int] = None,
    phase: Optional[str] = None,
    expected_ranks: Optional[int] = None,
    jobs: Optional[int] = None,
    cache: Union[bool, PathLike] = True,
    detail: str = "capped",
    progress: bool = False,
    peak_tflops: Optional[float] = None,
    peak_gbps: Optional[float] = None,
) -> Report:
    """Analyses profiling roots, rank folders or files, as ``profscope analyze`` does.

    Args:
        paths: what to analyse (at least one).
        only: run only these analyses (``--only``; e.g. ``["bubbles", "advisor"]``).
        min_gap_us: smallest idle gap counted as a bubble, µs.
        top: rows in top-N lists.
        batch: batch size the fixed-batch decode audit requires.
        phase: ``"prefill"`` or ``"decode"``: slice to one phase first.
        expected_ranks: how many ranks the run should have.
        jobs: files analysed at once (default: the CPUs).
        cache: True for the result cache in its default folder, a folder path, or False for none.
        detail: ``"capped"`` (16 devices listed per list, 100 entries per step list) or ``"full"``.
        progress: show the CLI's progress bar on stderr.
        peak_tflops: the efficiency analysis' compute peak, TFLOPS, for every dtype (``--peak-tflops``).
        peak_gbps: its memory bandwidth peak, GB/s (``--peak-gbps``).

    Raises:
        ProfscopeError: with the CLI's message (unreadable input, bad option, ...).
    """
    files = _paths(paths)
    options = [_opt("format", "json")]
    if not progress:
        options.append("--quiet")
    if only:
        options.append(_opt("only", ",".join(only)))
    options += [_opt("min-gap-us", repr(float(min_gap_us))), _opt("top", int(top)), _opt("detail", detail)]
    if batch is not None:
        options.append(_opt("batch", int(batch)))
    if phase is not None:
        options.append(_opt("phase", phase))
    if expected_ranks is not None:
        options.append(_opt("expected-ranks", int(expected_ranks)))
    if jobs is not None:
        options.append(_opt("jobs", int(jobs)))
    if peak_tflops is not None:
        options.append(_opt("peak-tflops", repr(float(peak_tflops))))
    if peak_gbps is not None:
        options.append(_opt("peak-gbps", repr(float(peak_gbps))))
    if cache is False:
        options.append("--no-cache")
    elif cache is not True:
        options.append(_opt("cache", os.fspath(cache)))
    out, _ = _cli("analyze", options, files)
    return Report(_json.loads(out), options, files)


class Tables:
    """The normalized tables of :func:`load` as ``pyarrow.Table`` (docs/tables.md): handed over
    from profscope's Arrow arrays through the Arrow C stream interface, without a copy."""

    NAMES = ("events", "steps", "kernels", "comm_tasks", "op_metrics", "files")

    def __init__(self, tables: Dict[str, "Any"]):
        self._t = tables

    @property
    def events(self) -> "Any":
        """Every event joined with its thread, process, file and kernel row: the Parquet
        export's columns (docs/export.md), ``file`` and ``file_rank`` first."""
        return self._t["events"]

    @property
    def steps(self) -> "Any":
        """The steps (ProfilerStep#N from host events, STEP_TIME, kernel_details.csv Step Id):
        file, rank, step, start_ns, end_ns, source."""
        return self._t["steps"]

    @property
    def kernels(self) -> "Any":
        """Kernel details, one row per distinct signature (op type, task type, block dims,
        shapes, dtypes, formats)."""
        return self._t["kernels"]

    @property
    def comm_tasks(self) -> "Any":
        """Per-task communication details (HCCL plane tasks, Kineto collectives)."""
        return self._t["comm_tasks"]

    @property
    def op_metrics(self) -> "Any":
        """Per-task op state and PMU pipe ratios (aic_* / aiv_* ``_ratio``; NaN not written)."""
        return self._t["op_metrics"]

    @property
    def files(self) -> "Any":
        """One row per input file: path, format, rank, world size, size, base time, truncated."""
        return self._t["files"]

    def table(self, name: str) -> "Any":
        """Table ``name`` (one of :attr:`NAMES`)."""
        return self._t[name]

    def __repr__(self) -> str:
        sizes = ", ".join(f"{k}: {v.num_rows}" for k, v in self._t.items())
        return f"<profscope.Tables {sizes}>"


def load(*paths: PathLike) -> Tables:
    """Reads profiles into the normalized tables (one joint set for every input), for your own
    queries in pandas, polars or DuckDB. The GIL is released while profscope reads."""
    import pyarrow as pa

    tables = {}
    for name, capsule in _load_tables(_paths(paths)):
        tables[name] = pa.RecordBatchReader._import_from_c_capsule(capsule).read_all()
    return Tables(tables)


class Diff:
    """The result of :func:`diff`: ``profscope diff --format json``."""

    def __init__(self, result: Dict[str, Any], code: int):
        self._d = result
        self._code = code

    @property
    def json(self) -> Dict[str, Any]:
        """The diff as ``profscope diff --format json`` prints it (docs/diff.md)."""
        return self._d

    @property
    def passed(self) -> bool:
        """False when a ``fail_on`` threshold was crossed (the CLI's exit 1)."""
        return self._code == 0

    def __repr__(self) -> str:
        return f"<profscope.Diff passed={self.passed}: {self._d.get('summary', '')}>"


def diff(base: PathLike, new: PathLike, fail_on: Optional[str] = None) -> Diff:
    """Compares two runs (saved reports or profiles) metric by metric, as ``profscope diff``.

    Args:
        base, new: saved ``--save`` reports, or profiles to analyse.
        fail_on: thresholds as the CLI's ``--fail-on`` takes them, e.g.
            ``"step_time>+3%,bubble_share>+1pt"`` (docs/diff.md).
    """
    options = ["--quiet", _opt("format", "json")]
    if fail_on:
        options.append(_opt("fail-on", fail_on))
    out, code = _cli("diff", options, [os.fspath(base), os.fspath(new)])
    return Diff(_json.loads(out), code)


def memory(*paths: PathLike, tp: Optional[int] = None, dp: Optional[int] = None) -> Dict[str, Any]:
    """What holds HBM on each device, from a run's evidence: a ``collect memory`` run folder, or
    npu-smi text, vLLM logs, safetensors and profiler files (``profscope memory --format json``;
    docs/analyses/memory.md). ``tp`` / ``dp``: the service's parallel sizes when no run folder
    states them."""
    options = [_opt("format", "json")]
    if tp is not None:
        options.append(_opt("tp", int(tp)))
    if dp is not None:
        options.append(_opt("dp", int(dp)))
    out, _ = _cli("memory", options, _paths(paths))
    return _json.loads(out)
