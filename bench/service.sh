#!/usr/bin/env bash
# bench/service.sh — what `memdiag record` (the service) costs over hours:
# CPU per sample, RSS over time, bytes per hour, for N idle processes.
# Run as root:
#
#   sudo bench/service.sh                       # N = 1000, 1 h, 10 min segments
#   sudo bench/service.sh -n 1000 -d 3600 -s 10m -o /tmp/service-bench
#   sudo bench/service.sh -n 1000 -d 300 -w    # and `memdiag watch` beside it, same conditions
#
# It starts N sleeping processes (ended by PID at the end), runs
# `memdiag record --interval 1s --segment S --duration D` into a fresh
# store, and every 60 s reads the recorder's /proc/PID/stat (utime,
# stime), /proc/PID/status (VmRSS, VmHWM), the store's size and the load
# average into OUT/series.csv. At the end it prints a Markdown summary:
# CPU ms per sample (user+sys of the whole run, from time(1), / samples written), RSS first/last/max, the
# store's bytes per hour, the load average over the run.
set -euo pipefail
N=1000; D=3600; SEG=10m; OUT=""; WATCH=0
while getopts "n:d:s:o:w" o; do
  case $o in n) N=$OPTARG;; d) D=$OPTARG;; s) SEG=$OPTARG;; o) OUT=$OPTARG;; w) WATCH=1;; *) exit 2;; esac
done
[ "$(id -u)" = 0 ] || { echo "run as root: memdiag must see every process's /proc/PID/io" >&2; exit 2; }
cd "$(dirname "$0")/.."
OUT=${OUT:-$(mktemp -d /tmp/memdiag-service-bench.XXXXXX)}
mkdir -p "$OUT"
rm -rf "$OUT/store"
idle=(); rec=""; wpid=""
cleanup() {
  [ -n "$rec" ] && kill -TERM "$rec" 2>/dev/null || true
  [ -n "$wpid" ] && kill -TERM "$wpid" 2>/dev/null || true
  for p in "${idle[@]:-}"; do [ -n "$p" ] && kill "$p" 2>/dev/null || true; done
}
trap cleanup EXIT
go build -o "$OUT/memdiag" .
for ((i = 0; i < N; i++)); do sleep 1000000 & idle+=($!); done
sleep 2
hz=$(getconf CLK_TCK)
start=$(date +%s)
/usr/bin/time -f "%e %U %S %M" -o "$OUT/time" \
  "$OUT/memdiag" record --store "$OUT/store" --interval 1s --segment "$SEG" --duration "${D}s" --max-age 0 --max-size 0 2>"$OUT/stderr" &
timer=$!
if [ "$WATCH" = 1 ]; then
  rm -f "$OUT/watch.jsonl.gz"
  /usr/bin/time -f "%e %U %S %M" -o "$OUT/time.watch" \
    "$OUT/memdiag" watch --quiet --interval 1s --duration "${D}s" --out "$OUT/watch.jsonl.gz" >/dev/null 2>"$OUT/stderr.watch" &
  wpid=$!
fi
sleep 1
rec=$(pgrep -P "$timer")
echo "elapsed_s,utime_s,stime_s,rss_kib,hwm_kib,store_bytes,segments,procs,load1" >"$OUT/series.csv"
probe() {
  local now st ut stt rss hwm bytes segs
  now=$(( $(date +%s) - start ))
  st=$(cut -d' ' -f14,15 "/proc/$rec/stat" 2>/dev/null) || return 1
  ut=${st% *}; stt=${st#* }
  rss=$(awk '/^VmRSS/{print $2}' "/proc/$rec/status")
  hwm=$(awk '/^VmHWM/{print $2}' "/proc/$rec/status")
  bytes=$(du -sb "$OUT/store" | cut -f1)
  segs=$(ls "$OUT/store" | grep -c '^memdiag-' || true)
  echo "$now,$(awk -v t="$ut" -v h="$hz" 'BEGIN{print t/h}'),$(awk -v t="$stt" -v h="$hz" 'BEGIN{print t/h}'),$rss,$hwm,$bytes,$segs,$(ls /proc | grep -c '^[0-9]'),$(cut -d' ' -f1 /proc/loadavg)" >>"$OUT/series.csv"
}
sleep 5
while kill -0 "$rec" 2>/dev/null; do
  probe || break
  for ((k = 0; k < 60; k++)); do kill -0 "$rec" 2>/dev/null || break; sleep 1; done
done
wait "$timer" || true
rec=""
if [ -n "$wpid" ]; then wait "$wpid" || true; wpid=""; fi
# the whole run's CPU and peak RSS, from time(1)
read -r e u s m < <(tail -n 1 "$OUT/time")
end=$(date +%s)
samples=0
for f in "$OUT"/store/memdiag-*.jsonl.gz; do
  samples=$((samples + $(zcat "$f" | grep -c '"type":"sample"')))
done
segs=$(ls "$OUT"/store/memdiag-*.jsonl.gz | wc -l)
# a switch writes its sample into both segments: count each sample once
samples=$((samples - segs + 1))
bytes=$(du -cb "$OUT"/store/memdiag-*.jsonl.gz | tail -1 | cut -f1)
echo "# memdiag service bench: $(date -u -d @"$start" +%FT%TZ) .. $(date -u -d @"$end" +%FT%TZ), $(uname -r), $(nproc) cores"
echo "# command: bench/service.sh -n $N -d $D -s $SEG -o $OUT"
awk -F, -v n="$N" -v samples="$samples" -v bytes="$bytes" -v wall="$((end - start))" -v segs="$segs" -v u="$u" -v s="$s" -v m="$m" '
  NR == 2 { rss0 = $4 } NR > 1 { last = $0; split($0, a, ","); if (a[4] > mx) mx = a[4]; if (mn == "" || a[4] < mn) mn = a[4]; l += a[9]; nl++; procs = a[8] }
  END {
    printf "| N | samples | segments | CPU ms/sample (user+sys) | %% of one core | RSS first / last / min / max (MiB) | peak RSS (time -f %M, MiB) | bytes/hour | load avg (1 min, mean) | processes on host |\n"
    printf "|---|---|---|---|---|---|---|---|---|---|\n"
    printf "| %d | %d | %d | %.2f | %.2f | %.1f / %.1f / %.1f / %.1f | %.1f | %.2f MB | %.2f | %d |\n", n, samples, segs, (u+s)*1000/samples, (u+s)*100/wall, rss0/1024, a[4]/1024, mn/1024, mx/1024, m/1024, bytes*3600/wall/1e6, l/nl, procs
  }' "$OUT/series.csv"
if [ "$WATCH" = 1 ]; then
  read -r we wu ws wm < <(tail -n 1 "$OUT/time.watch")
  wsamples=$(zcat "$OUT/watch.jsonl.gz" | grep -c '"type":"sample"')
  awk -v u="$u" -v s="$s" -v n="$samples" -v m="$m" -v wu="$wu" -v ws="$ws" -v wn="$wsamples" -v wm="$wm" -v wb="$(stat -c %s "$OUT/watch.jsonl.gz")" -v wall="$((end - start))" -v bytes="$bytes" 'BEGIN {
    printf "\n| beside each other | samples | CPU ms/sample | peak RSS (MiB) | bytes/hour |\n|---|---|---|---|---|\n"
    printf "| memdiag record | %d | %.2f | %.1f | %.2f MB |\n", n, (u+s)*1000/n, m/1024, bytes*3600/wall/1e6
    printf "| memdiag watch --quiet | %d | %.2f | %.1f | %.2f MB |\n", wn, (wu+ws)*1000/wn, wm/1024, wb*3600/wall/1e6
  }'
fi
echo
echo "series (every 60 s): $OUT/series.csv; recorder's stderr: $OUT/stderr"
