#!/usr/bin/env bash
# Seeds the fuzz corpora from small slices of the real samples in ../shared/samples (nothing large
# is committed): fuzz/corpus/<target>/. Run from the repository root: bash fuzz/seed.sh
set -eu  # no pipefail: `find | head` ends find with SIGPIPE by design
S="${SAMPLES:-../shared/samples}"
C=fuzz/corpus
mkdir -p $C/saved_report $C/run_metadata $C/cache_entry $C/btree $C/chrome_json $C/kernel_csv $C/safetensors_header $C/npu_smi $C/vllm_log
# b-tree: the first 8 pages of real dbs (schema and first table pages), and a whole small db.
for f in "$S"/ascend-pt/db/level0/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/*.db "$S"/ascend-pt/msprof_0.db; do
  head -c 32768 "$f" > "$C/btree/$(echo "$f" | md5sum | cut -c1-12)"
done
cp "$S"/ascend-pt/db/level0/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/analysis.db $C/btree/analysis_db
# Chrome JSON: 8 KiB prefixes of real traces of each layout.
find "$S"/ascend-pt/text/level0 "$S"/torch-traces "$S"/torch-cpu "$S"/ascend-timeline "$S"/ascend-msprof-legacy \
  -name '*.json' -size -40M | head -40 | while read -r f; do
  head -c 8192 "$f" > "$C/chrome_json/$(echo "$f" | md5sum | cut -c1-12)"
done
# Chrome JSON: the real level1 trace's Overlap Analysis metadata and first 40 rows, as one array
# (the rows a chunk sums while parsing once the metadata is merged).
python3 - "$S"/ascend-pt/text/level1/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/trace_view.json "$C/chrome_json/overlap_rows" <<'PY'
import json, re, sys
text = open(sys.argv[1]).read()
pid = re.search(r'"pid": (\d+), "tid": 0, "args": \{"name": "Overlap Analysis"\}', text).group(1)
events = re.findall(r'\{[^{}]*"pid": %s,[^{}]*(?:\{[^{}]*\}[^{}]*)?\}' % pid, text)
meta = [e for e in events if '"ph": "M"' in e]
rows = [e for e in events if '"ph": "X"' in e][:40]
open(sys.argv[2], "w").write("[" + ", ".join(meta + rows) + "]")
PY
# CSVs: 4 KiB prefixes of real kernel_details / op_summary files.
find "$S" -name 'kernel_details*.csv' -o -name 'op_summary*.csv' | head -20 | while read -r f; do
  head -c 4096 "$f" > "$C/kernel_csv/$(echo "$f" | md5sum | cut -c1-12)"
done
# safetensors: the header JSON of the real files.
find "$S"/safetensors -type f | while read -r f; do
  case "$f" in
    *.safetensors) python3 -c 'import sys,struct; b=open(sys.argv[1],"rb").read(8); n=struct.unpack("<Q",b)[0]; f=open(sys.argv[1],"rb"); f.seek(8); sys.stdout.buffer.write(f.read(min(n,65536)))' "$f" > "$C/safetensors_header/$(basename "$f").json" ;;
    *.json) head -c 16384 "$f" > "$C/safetensors_header/$(basename "$f")" ;;
  esac
done
cp "$S"/npu-smi/*.txt $C/npu_smi/ 2>/dev/null || find "$S"/npu-smi -type f -name '*' -exec cp {} $C/npu_smi/ \;
find "$S"/vllm-logs -type f ! -name 'SOURCES*' -exec cp {} $C/vllm_log/ \;
# Cache entries: the real entries of the text/level1 root (sealed), and their postcard bodies
# (the target seals those itself, so mutations reach the decoder of a cached part).
T=$(mktemp -d)
cargo run --release --quiet -- analyze "$S"/ascend-pt/text/level1 --quiet --format json --cache "$T" > /dev/null
for e in "$T"/v3/*.part; do
  n=$(basename "$e" .part | cut -c1-12)
  cp "$e" "$C/cache_entry/$n.sealed"
  python3 -c 'import sys; b=open(sys.argv[1],"rb").read(); sys.stdout.buffer.write(b[16:-32])' "$e" > "$C/cache_entry/$n.body"
done
rm -rf "$T"
# Saved reports: real reports of the db and text roots, whole and as 16 KiB prefixes.
for r in db/level0 db/level1 text/level1; do
  n=$(echo "$r" | tr / _)
  cargo run --release --quiet -- analyze "$S"/ascend-pt/$r --quiet --no-cache --format json > "$C/saved_report/$n.json"
  head -c 16384 "$C/saved_report/$n.json" > "$C/saved_report/$n.head"
done
# Run metadata: the real profiler_metadata.json files, and a db's META_DATA ENV_VARIABLES value.
for f in "$S"/ascend-pt/text/level*/rank*_ascend_pt/profiler_metadata.json; do
  cp "$f" "$C/run_metadata/$(echo "$f" | md5sum | cut -c1-12)"
done
python3 -c 'import sqlite3,sys; c=sqlite3.connect("file:"+sys.argv[1]+"?immutable=1", uri=True); sys.stdout.write(c.execute("select value from META_DATA where name=\"ENV_VARIABLES\"").fetchone()[0])' \
  "$S"/ascend-pt/db/level1/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/ascend_pytorch_profiler_0.db > "$C/run_metadata/meta_data_env"
echo "seeded: $(find $C -type f | wc -l) files"
