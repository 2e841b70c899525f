"""Write tests/sql/<query>.slt: the expected rows of each queries/<query>.sql on each fixture.

The rows come from DuckDB (PyPI `duckdb`), an engine independent of profscope's, run over
`profscope export --parquet` of each fixture; tests/it/sql_queries.rs then checks the same rows
against `profscope query` (polars) and against the numbers of `profscope analyze`.

usage: python bless_sql_expected.py PROFSCOPE_BIN
Fixtures (name = run tag): level0, level1, level2 (real db roots), text-level1 (real text root),
demo (generated).
"""
import json
import os
import subprocess
import sys
import tempfile

import duckdb

FIXTURES = {
    "level0": "../shared/samples/ascend-pt/db/level0",
    "level1": "../shared/samples/ascend-pt/db/level1",
    "level2": "../shared/samples/ascend-pt/db/level2",
    "text-level1": "../shared/samples/ascend-pt/text/level1",
    "demo": "fixtures/demo",
}
HERE = os.path.dirname(os.path.abspath(__file__))


def letter(v) -> str:
    if isinstance(v, bool) or v is None:
        return "T"
    if isinstance(v, int):
        return "I"
    if isinstance(v, float):
        return "R"
    return "T"


def cell(v) -> str:
    if v is None:
        return "NULL"
    if isinstance(v, float):
        return repr(v)
    return str(v)


def main() -> None:
    binary = sys.argv[1]
    queries = sorted(f for f in os.listdir("queries") if f.endswith(".sql"))
    blocks = {q: [] for q in queries}
    with tempfile.TemporaryDirectory() as tmp:
        for tag, root in FIXTURES.items():
            out = os.path.join(tmp, tag)
            subprocess.run(
                [binary, "export", root, "--parquet", out, "--run", tag, "--quiet"],
                check=True,
                stdout=subprocess.DEVNULL,
            )
            got = json.loads(
                subprocess.run(
                    [sys.executable, os.path.join(HERE, "duckdb_query.py"), out]
                    + [os.path.join("queries", q) for q in queries],
                    check=True,
                    capture_output=True,
                    text=True,
                ).stdout
            )
            for q in queries:
                r = got[os.path.join("queries", q)]
                types = "".join(letter(v) for v in r["rows"][0]) if r["rows"] else ""
                lines = [f"query {types} {tag}", "# " + "\t".join(r["columns"]), "----"]
                lines += ["\t".join(cell(v) for v in row) for row in r["rows"]]
                blocks[q].append("\n".join(lines))
    for q, bs in blocks.items():
        name = q[: -len(".sql")]
        head = (
            f"# Expected rows of queries/{q} on each fixture (tab-separated; R columns compare\n"
            f"# within 1e-9 relative). Produced by DuckDB {duckdb.__version__} over `profscope export\n"
            "# --parquet` of the"
            " fixture with tests/tools/bless_sql_expected.py; tests/it/sql_queries.rs checks them\n"
            "# against `profscope query` and against `profscope analyze`.\n"
        )
        with open(os.path.join("tests", "sql", name + ".slt"), "w", encoding="utf-8") as f:
            f.write(head + "\n" + "\n\n".join(bs) + "\n")


if __name__ == "__main__":
    main()
