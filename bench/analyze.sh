#!/usr/bin/env bash
# bench/analyze.sh — wall time and peak RSS of `memdiag analyze` on a
# generated day: 24 h at 1 s (86,400 samples, 10 processes per sample)
# and a results file of 1,000,000 requests (bench/genrec).
# Targets: <= 2 s wall, <= 200 MiB peak RSS.
#
#   bench/analyze.sh            # 3 runs; plain recording, then .gz
#   bench/analyze.sh -r 5 -k    # 5 runs, keep the generated files
#
# Needs: go, time (apt-get install time). No root.
set -euo pipefail
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"
bench_setup analyze 3 "$@"
go build -o "$tmp/memdiag" . && go build -o "$tmp/genrec" ./bench/genrec
"$tmp/genrec" -out "$tmp/day.jsonl" -latency "$tmp/day.csv"
"$tmp/genrec" -out "$tmp/day.jsonl.gz" -latency ""
echo "# memdiag analyze bench: $(date -u +%FT%TZ), $(uname -r), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# recording $(stat -c %s "$tmp/day.jsonl") bytes plain, $(stat -c %s "$tmp/day.jsonl.gz") bytes gzip; results file $(stat -c %s "$tmp/day.csv") bytes"
echo
echo "| input | run | wall s | user s | sys s | peak RSS MiB |"
echo "|---|---:|---:|---:|---:|---:|"
for rec in day.jsonl day.jsonl.gz; do
  for ((i = 1; i <= RUNS; i++)); do
    /usr/bin/time -f "%e %U %S %M" -o "$tmp/time" "$tmp/memdiag" analyze "$tmp/$rec" --latency "$tmp/day.csv" >"$tmp/out" 2>"$tmp/err" || { cat "$tmp/err" >&2; exit 1; }
    read -r e u s m < <(tail -n 1 "$tmp/time")
    awk -v r="$rec" -v i="$i" -v e="$e" -v u="$u" -v s="$s" -v m="$m" 'BEGIN{printf "| %s + day.csv | %d | %.2f | %.2f | %.2f | %.1f |\n", r, i, e, u, s, m/1024}'
  done
done
echo
echo "First lines of the last report:"
head -n 15 "$tmp/out"
