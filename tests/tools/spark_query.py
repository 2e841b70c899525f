"""Run SQL files with Spark SQL (PyPI `pyspark`, local mode) over a Hive-partitioned
`profscope export --parquet` directory; the walk-through of docs/scale.md.

Spark discovers the `run=` and `rank=` partition folders as columns, so the `events` view has the
columns docs/query.md lists and queries/*.sql run unchanged. Prints one JSON document:
{file: {"columns": [...], "rows": [[...], ...]}}, like duckdb_query.py.

usage: python spark_query.py PARQUET_DIR QUERY.sql...
"""
import json
import sys

from pyspark.sql import SparkSession


def main() -> None:
    parquet_dir, *queries = sys.argv[1:]
    spark = (
        SparkSession.builder.master("local[2]")
        .appName("profscope-queries")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.session.timeZone", "UTC")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    spark.read.parquet(parquet_dir).createOrReplaceTempView("events")
    out = {}
    for path in queries:
        with open(path, encoding="utf-8") as f:
            df = spark.sql(f.read())
        out[path] = {
            "columns": df.columns,
            "rows": [list(r) for r in df.collect()],
        }
    spark.stop()
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
