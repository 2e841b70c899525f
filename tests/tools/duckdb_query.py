"""Run SQL files with DuckDB over a Hive-partitioned `profscope export --parquet` directory.

Test-time helper (tests/it/sql_queries.rs); needs PyPI `duckdb`. The `events` view is the Parquet
files with hive_partitioning, so `run` and `rank` come from the partition folders, as in
docs/query.md. Prints one JSON document: {file: {"columns": [...], "rows": [[...], ...]}}.

usage: python duckdb_query.py PARQUET_DIR QUERY.sql...
"""
import json
import sys

import duckdb


def main() -> None:
    parquet_dir, *queries = sys.argv[1:]
    con = duckdb.connect()
    con.execute(
        "CREATE VIEW events AS SELECT * FROM read_parquet("
        f"'{parquet_dir}/**/*.parquet', hive_partitioning = true)"
    )
    out = {}
    for path in queries:
        with open(path, encoding="utf-8") as f:
            cur = con.execute(f.read())
        out[path] = {
            "columns": [d[0] for d in cur.description],
            "rows": [list(r) for r in cur.fetchall()],
        }
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
