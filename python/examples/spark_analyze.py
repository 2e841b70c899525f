"""Analyse many profiling roots in parallel on Spark with the profscope package and write one
table, a row per root (docs/scale.md). Each executor needs the package (`pip install ./python`)
and read access to the roots (shared storage).

usage: python spark_analyze.py OUT_PARQUET_DIR ROOT...
"""
import os
import sys

from pyspark.sql import Row, SparkSession
from pyspark.sql.types import LongType, StringType, StructField, StructType

SCHEMA = StructType(
    [StructField("root", StringType(), False), StructField("error", StringType(), True)]
    + [StructField(n, StringType(), True) for n in ("verdict", "kind")]
    + [StructField(n, LongType(), False) for n in ("devices", "ranks", "window_ns", "computing_ns", "free_ns", "idle_ns")]
    + [StructField("top_rule", StringType(), True), StructField("top_time_at_stake_ns", LongType(), False)]
    + [StructField("headline", StringType(), True)]
)


def summarize(root: str) -> Row:
    import profscope

    try:
        r = profscope.analyze(root, cache=False)
    except profscope.ProfscopeError as e:
        return Row(root=root, error=str(e), verdict=None, kind=None, devices=0, ranks=0,
                   window_ns=0, computing_ns=0, free_ns=0, idle_ns=0, top_rule=None,
                   top_time_at_stake_ns=0, headline=None)
    a = r.json["analyses"]
    dt = a.get("device_time") or []
    bubbles = a.get("bubbles") or []
    findings = (a.get("advisor") or {}).get("findings") or []
    top = findings[0] if findings else {}
    return Row(
        root=root,
        error=None,
        verdict=r.verdict.get("status"),
        kind=r.verdict.get("kind"),
        devices=len(dt),
        ranks=len(r.json["summary"].get("ranks") or []),
        window_ns=sum(d["window_ns"] for d in dt),
        computing_ns=sum(d["computing_ns"] for d in dt),
        free_ns=sum(d["free_ns"] for d in dt),
        idle_ns=sum(b["idle_ns"] for b in bubbles),
        top_rule=top.get("rule"),
        top_time_at_stake_ns=top.get("time_at_stake_ns", 0),
        headline=r.headline[0] if r.headline else None,
    )


def main() -> None:
    out, *roots = sys.argv[1:]
    # Local mode: the workers run this interpreter (the one with profscope installed); on a
    # cluster, point PYSPARK_PYTHON at the executors' Python that has it.
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    spark = (
        SparkSession.builder.master("local[2]")
        .appName("profscope-analyze")
        .config("spark.ui.enabled", "false")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    rows = spark.sparkContext.parallelize(roots, len(roots)).map(summarize)
    spark.createDataFrame(rows, SCHEMA).write.mode("overwrite").parquet(out)
    spark.stop()


if __name__ == "__main__":
    main()
