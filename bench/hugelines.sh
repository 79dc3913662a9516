#!/usr/bin/env bash
# bench/hugelines.sh — peak RSS of `memdiag analyze` on recordings with
# very long lines (docs/benchmarks.md, "analyze on hostile input"):
#   one.jsonl        600 samples and one line of 65 MiB of junk (over the
#                    64 MiB a line may have: skipped with a warning)
#   many.jsonl.gz    100 samples each padded to 48 MiB (valid samples,
#                    4.8 GiB uncompressed), gzip
# The bound it checks is stated in docs/benchmarks.md; this script
# prints the measurements, it asserts nothing.
#
#   bench/hugelines.sh          # 2 runs of each
#   bench/hugelines.sh -r 3 -k  # 3 runs, keep the generated files
#
# Needs: go, time (apt-get install time), about 100 MiB of disk in /tmp
# (the 4.8 GiB of many.jsonl.gz is written compressed). No root.
set -euo pipefail
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"
bench_setup hugelines 2 "$@"
go build -o "$tmp/memdiag" . && go build -o "$tmp/genrec" ./bench/genrec && go build -o "$tmp/hugelines" ./bench/hugelines
"$tmp/genrec" -out "$tmp/small.jsonl" -latency "" -duration 10m
"$tmp/hugelines" -in "$tmp/small.jsonl" -out "$tmp/one.jsonl" -junk 65
"$tmp/hugelines" -in "$tmp/small.jsonl" -out "$tmp/many.jsonl.gz" -pad 48 -lines 100
echo "# memdiag analyze on long lines: $(date -u +%FT%TZ), $(uname -r), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), $(git rev-parse --short HEAD)"
echo "# one.jsonl $(stat -c %s "$tmp/one.jsonl") bytes; many.jsonl.gz $(stat -c %s "$tmp/many.jsonl.gz") bytes"
echo
echo "| input | run | exit | wall s | peak RSS MiB | warnings |"
echo "|---|---:|---:|---:|---:|---|"
for rec in one.jsonl many.jsonl.gz; do
  for ((i = 1; i <= RUNS; i++)); do
    set +e
    /usr/bin/time -f "%e %M" -o "$tmp/time" "$tmp/memdiag" analyze "$tmp/$rec" >"$tmp/out" 2>"$tmp/err"
    code=$?
    set -e
    read -r e m < <(tail -n 1 "$tmp/time")
    warn=$(grep -o 'line of [0-9]* bytes skipped[^;]*\|skipped' "$tmp/out" "$tmp/err" | head -n 1 | cut -d: -f2- || true)
    awk -v r="$rec" -v i="$i" -v c="$code" -v e="$e" -v m="$m" -v w="$warn" 'BEGIN{printf "| %s | %d | %d | %.2f | %.1f | %s |\n", r, i, c, e, m/1024, w}'
  done
done
