#!/usr/bin/env bash
# bench/html.sh — size of `memdiag analyze --format html` for a generated
# day (24 h at 1 s, 86,400 samples, 1,000,000 requests: bench/genrec), and
# what headless Chromium takes to render it: the page's own time from
# navigation start to the charts drawn (performance.now(), written by
# its script into <body data-render-ms>), and the whole browser run
# (start, load, render, DOM dump, exit) under /usr/bin/time.
#
#   bench/html.sh          # 3 browser runs
#   bench/html.sh -r 5 -k  # 5 runs, keep the generated files
#
# Needs: go, chromium, time (apt-get install chromium time). No network.
set -euo pipefail
command -v chromium >/dev/null || { echo "missing chromium: apt-get install chromium" >&2; exit 2; }
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"
bench_setup html 3 "$@"
go build -o "$tmp/memdiag" . && go build -o "$tmp/genrec" ./bench/genrec
"$tmp/genrec" -out "$tmp/day.jsonl.gz" -latency "$tmp/day.csv"
/usr/bin/time -f "%e %U %S %M" -o "$tmp/analyze.time" "$tmp/memdiag" analyze "$tmp/day.jsonl.gz" --latency "$tmp/day.csv" -o "$tmp/day.html" 2>/dev/null
echo "# memdiag html bench: $(date -u +%FT%TZ), $(uname -r), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), $(chromium --version 2>/dev/null)"
read -r wall user sys rss < "$tmp/analyze.time"
echo "# day.html: $(stat -c %s "$tmp/day.html") bytes ($(gzip -c "$tmp/day.html" | wc -c) gzipped); analyze -o day.html: ${wall} s wall, $((rss / 1024)) MiB peak RSS"
echo
echo "| run | page render ms | chromium wall s | chromium user+sys s |"
echo "|---:|---:|---:|---:|"
for ((i = 1; i <= RUNS; i++)); do
  rm -rf "$tmp/profile"
  /usr/bin/time -f "%e %U %S" -o "$tmp/chromium.time" chromium --headless --no-sandbox --disable-gpu --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync --user-data-dir="$tmp/profile" \
    --window-size=1280,1800 --dump-dom "file://$tmp/day.html" > "$tmp/dom.html" 2>/dev/null
  ms=$(grep -o 'data-render-ms="[0-9]*"' "$tmp/dom.html" | grep -o '[0-9]*' || echo "?")
  read -r cwall cuser csys < "$tmp/chromium.time"
  echo "| $i | $ms | $cwall | $(echo "$cuser + $csys" | bc) |"
done
