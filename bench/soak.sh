#!/usr/bin/env bash
# bench/soak.sh — issue 28's soak (not CI): `memdiag record --listen` at
# 1 s for an hour, a real Prometheus scraping it every second, and every
# minute a burst of 200 concurrent scrapes of the same /metrics. Run as
# root:
#
#   sudo bench/soak.sh                          # 1 h, 200 per burst, 10 min segments
#   sudo bench/soak.sh -d 3600 -n 200 -s 10m -o /tmp/soak
#   sudo bench/soak.sh -d 120 -o /tmp/soak-try # the script itself, 2 minutes
#
# It builds memdiag and bench/scrapeburst into OUT, starts
# `memdiag record --store OUT/store --interval 1s --segment S --listen
# 127.0.0.1:PORT` and Prometheus (the Debian package's
# /usr/bin/prometheus; its own config and data dir in OUT, scrape_interval
# and scrape_timeout 1s, 127.0.0.1 only), both on free ports. Every 60 s
# (at 0 s of each minute of the run) it reads the recorder's
# /proc/PID/stat and /proc/PID/status, the store's size,
# memdiag_samples_late_total and memdiag_samples_missed_total from
# /metrics and the load average into OUT/series.csv; every 60 s (at 30 s
# of each minute, so that a burst is apart from the recorder's
# once-a-minute analysis) scrapeburst sends N concurrent GETs of /metrics
# and appends start, end, ok, failed, p50 and max latency to
# OUT/bursts.csv. After D seconds it reads /metrics once more, asks
# Prometheus (its HTTP API) how many scrapes it made and how many failed
# (up == 0) and how long they took, stops the recorder with SIGTERM and
# Prometheus by PID, reads the gap lines ("type":"gap", record.Gap) from
# the store into OUT/gaps.tsv with, for each, whether it overlaps a burst
# (±1 s), and prints a Markdown summary.
#
# RSS: with --listen the exporter's correlator holds the last half to
# whole hour of samples (exposition.Options.Window, two series, the older
# dropped each half hour from the first hour on), so the recorder's RSS
# grows for the first hour by design; whether it is then flat shows only
# in a run longer than an hour (-d 7200 or more).
set -euo pipefail
D=3600; SEG=10m; OUT=""; N=200
while getopts "d:s:o:n:" o; do
  case $o in d) D=$OPTARG;; s) SEG=$OPTARG;; o) OUT=$OPTARG;; n) N=$OPTARG;; *) exit 2;; esac
done
[ "$(id -u)" = 0 ] || { echo "run as root: memdiag must see every process's /proc/PID/io" >&2; exit 2; }
command -v /usr/bin/prometheus >/dev/null || { echo "missing /usr/bin/prometheus: apt-get install prometheus" >&2; exit 2; }
for c in jq curl ss /usr/bin/time; do command -v "$c" >/dev/null || { echo "missing $c" >&2; exit 2; }; done
cd "$(dirname "$0")/.."
OUT=${OUT:-$(mktemp -d /tmp/memdiag-soak.XXXXXX)}
mkdir -p "$OUT"
rm -rf "$OUT/store" "$OUT/prom"
# a TCP port nobody listens on (a race with another starter is possible
# and ends the run at the listen error)
freeport() {
  local p
  while :; do
    p=$((20000 + RANDOM % 40000))
    [ "$p" != "${1:-}" ] && ! ss -Hltn "sport = :$p" | grep -q . && { echo "$p"; return; }
  done
}
MPORT=$(freeport); PPORT=$(freeport "$MPORT")
URL="http://127.0.0.1:$MPORT/metrics"; API="http://127.0.0.1:$PPORT/api/v1"
rec=""; timer=""; prom=""
cleanup() {
  [ -n "$rec" ] && kill -TERM "$rec" 2>/dev/null || true
  [ -n "$prom" ] && kill -TERM "$prom" 2>/dev/null || true
}
trap cleanup EXIT
go build -o "$OUT/memdiag" .
go build -o "$OUT/scrapeburst" ./bench/scrapeburst
cat >"$OUT/prometheus.yml" <<YML
global:
  scrape_interval: 1s
  scrape_timeout: 1s
scrape_configs:
  - job_name: memdiag
    static_configs:
      - targets: ['127.0.0.1:$MPORT']
YML
hz=$(getconf CLK_TCK)
/usr/bin/time -f "%e %U %S %M" -o "$OUT/time" \
  "$OUT/memdiag" record --store "$OUT/store" --interval 1s --segment "$SEG" --listen "127.0.0.1:$MPORT" \
  --max-age 0 --max-size 0 2>"$OUT/stderr" &
timer=$!
sleep 1
rec=$(pgrep -P "$timer")
for ((k = 0; k < 30; k++)); do curl -sf -o /dev/null "$URL" && break; sleep 1; done
curl -sf -o /dev/null "$URL" || { echo "the recorder does not answer on $URL; its stderr:" >&2; cat "$OUT/stderr" >&2; exit 1; }
/usr/bin/prometheus --config.file "$OUT/prometheus.yml" --storage.tsdb.path "$OUT/prom" \
  --web.listen-address "127.0.0.1:$PPORT" --storage.tsdb.retention.time 1d >"$OUT/prometheus.log" 2>&1 &
prom=$!
for ((k = 0; k < 30; k++)); do curl -sf -o /dev/null "http://127.0.0.1:$PPORT/-/ready" && break; sleep 1; done
curl -sf -o /dev/null "http://127.0.0.1:$PPORT/-/ready" || { echo "Prometheus is not ready; its log:" >&2; tail "$OUT/prometheus.log" >&2; exit 1; }
start=$(date +%s)
metric() { awk -v m="$1" '$1 == m { print $2 }' "$2"; }
echo "elapsed_s,utime_s,stime_s,rss_kib,hwm_kib,store_bytes,segments,late,missed,load1" >"$OUT/series.csv"
probe() {
  local st ut stt rss hwm bytes segs
  st=$(cut -d' ' -f14,15 "/proc/$rec/stat" 2>/dev/null) || return 1
  ut=${st% *}; stt=${st#* }
  rss=$(awk '/^VmRSS/{print $2}' "/proc/$rec/status")
  hwm=$(awk '/^VmHWM/{print $2}' "/proc/$rec/status")
  bytes=$(du -sb "$OUT/store" | cut -f1)
  segs=$(ls "$OUT/store" | grep -c '^memdiag-' || true)
  curl -s --max-time 5 -o "$OUT/metrics.probe" "$URL" || : >"$OUT/metrics.probe"
  echo "$(( $(date +%s) - start )),$(awk -v t="$ut" -v h="$hz" 'BEGIN{print t/h}'),$(awk -v t="$stt" -v h="$hz" 'BEGIN{print t/h}'),$rss,$hwm,$bytes,$segs,$(metric memdiag_samples_late_total "$OUT/metrics.probe"),$(metric memdiag_samples_missed_total "$OUT/metrics.probe"),$(cut -d' ' -f1 /proc/loadavg)" >>"$OUT/series.csv"
}
echo "start_unix,end_unix,ok,failed,p50_ms,max_ms" >"$OUT/bursts.csv"
: >"$OUT/bursts.err"
next_probe=$start; next_burst=$((start + 30)); died=""
while (( $(date +%s) < start + D )); do
  kill -0 "$rec" 2>/dev/null || { died="the recorder exited at $(( $(date +%s) - start )) s"; break; }
  now=$(date +%s)
  if (( now >= next_probe )); then probe || true; next_probe=$((next_probe + 60)); fi
  if (( now >= next_burst && now < start + D - 5 )); then
    "$OUT/scrapeburst" -url "$URL" -n "$N" -timeout 10s >>"$OUT/bursts.csv" 2>>"$OUT/bursts.err" || true
    next_burst=$((next_burst + 60))
  fi
  sleep 1
done
end=$(date +%s)
probe || true
curl -s --max-time 5 -o "$OUT/metrics.final" "$URL" || : >"$OUT/metrics.final"
late=$(metric memdiag_samples_late_total "$OUT/metrics.final"); missed=$(metric memdiag_samples_missed_total "$OUT/metrics.final")
# Prometheus over the whole run: every scrape it made of the recorder,
# those that failed (up == 0), and how long they took
W=$(( end - start ))
q() { curl -s --get "$API/query" --data-urlencode "query=$1" --data-urlencode "time=$end" | jq -r '.data.result[0].value[1] // "n/a"'; }
scrapes=$(q "count_over_time(up{job=\"memdiag\"}[${W}s])")
upsum=$(q "sum_over_time(up{job=\"memdiag\"}[${W}s])")
sd99=$(q "quantile_over_time(0.99, scrape_duration_seconds{job=\"memdiag\"}[${W}s])")
sdmax=$(q "max_over_time(scrape_duration_seconds{job=\"memdiag\"}[${W}s])")
plate=$(q "max_over_time(memdiag_samples_late_total{job=\"memdiag\"}[${W}s])")
pmissed=$(q "max_over_time(memdiag_samples_missed_total{job=\"memdiag\"}[${W}s])")
# Prometheus does not scrape itself here: its own summary from its /metrics
ival99=$(curl -s "http://127.0.0.1:$PPORT/metrics" | awk '/^prometheus_target_interval_length_seconds\{interval="1s",quantile="0.99"\}/ { print $2 }')
failed_scrapes=$(awk -v c="$scrapes" -v s="$upsum" 'BEGIN { if (c == "n/a" || s == "n/a") print "n/a"; else print c - s }')
kill -TERM "$prom" 2>/dev/null || true; wait "$prom" 2>/dev/null || true; prom=""
kill -TERM "$rec" 2>/dev/null || true; wait "$timer" || true; rec=""
read -r e u s m < <(tail -n 1 "$OUT/time")
# the gap lines, once each (a sample at a switch is in two segments)
for f in "$OUT"/store/memdiag-*.jsonl.gz; do zcat "$f"; done | { grep '"type":"gap"' || true; } |
  jq -r '[.start, .end, .missed, (.late_ns // 0), .reason] | @tsv' | sort -u >"$OUT/gaps.raw"
: >"$OUT/gaps.tsv"
while IFS=$'\t' read -r gs ge gm gl gr; do
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$(date -d "$gs" +%s.%N)" "$(date -d "$ge" +%s.%N)" "$gm" "$gl" "$gr" "$gs" "$ge" >>"$OUT/gaps.tsv"
done <"$OUT/gaps.raw"
# each gap: its phase in the run's minute (bursts start at 30 s) and
# whether it overlaps a burst, ±1 s
awk -F'\t' -v start="$start" '
  NR == FNR { if (FNR > 1) { split($0, b, ","); bs[++nb] = b[1]; be[nb] = b[2] } ; next }
  { hit = "no"; for (i = 1; i <= nb; i++) if ($1 <= be[i] + 1 && $2 >= bs[i] - 1) hit = "yes"
    printf "%s\t%s\t%s\t%.0f\t%.3f\t%s\t%d\t%s\n", $6, $7, $3, $4 / 1e6, $2 - $1, $5, ($2 - start) % 60, hit }' \
  <(tr -d '\r' <"$OUT/bursts.csv") "$OUT/gaps.tsv" >"$OUT/gaps.burst.tsv"
ngaps=$(wc -l <"$OUT/gaps.burst.tsv"); nburstgaps=$(awk -F'\t' '$8 == "yes"' "$OUT/gaps.burst.tsv" | wc -l)
samples=0
for f in "$OUT"/store/memdiag-*.jsonl.gz; do
  samples=$((samples + $(zcat "$f" | grep -c '"type":"sample"')))
done
segs=$(ls "$OUT"/store/memdiag-*.jsonl.gz | wc -l)
samples=$((samples - segs + 1))
echo "# memdiag soak: $(date -u -d @"$start" +%FT%TZ) .. $(date -u -d @"$end" +%FT%TZ), $(uname -r), $(nproc) cores${died:+; $died}"
echo "# command: bench/soak.sh -d $D -n $N -s $SEG -o $OUT"
echo
awk -F, -v samples="$samples" -v wall="$e" -v u="$u" -v s="$s" -v m="$m" -v late="${late:-n/a}" -v missed="${missed:-n/a}" -v ngaps="$ngaps" -v nbg="$nburstgaps" '
  NR == 2 { rss0 = $4 } NR > 1 { split($0, a, ","); if (a[4] > mx) mx = a[4]; if (mn == "" || a[4] < mn) mn = a[4]; l += a[10]; nl++; if (lmx == "" || a[10] > lmx) lmx = a[10] }
  END {
    printf "| samples (recorder ran %.0f s) | late / missed (/metrics) | gap lines (of them during a burst) | CPU ms/sample | RSS first / last / min / max (MiB) | peak RSS (time -f %%M, MiB) | load avg 1 min, mean / max |\n", wall
    printf "|---|---|---|---|---|---|---|\n"
    printf "| %d | %s / %s | %d (%d) | %.2f | %.1f / %.1f / %.1f / %.1f | %.1f | %.1f / %.1f |\n", samples, late, missed, ngaps, nbg, (u+s)*1000/samples, rss0/1024, a[4]/1024, mn/1024, mx/1024, m/1024, l/nl, lmx
  }' "$OUT/series.csv"
echo
echo "| Prometheus scrapes | failed (up == 0) | scrape duration p99 / max (ms) | interval p99 (s) | late / missed seen by Prometheus |"
echo "|---|---|---|---|---|"
awk -v c="$scrapes" -v f="$failed_scrapes" -v p="$sd99" -v x="$sdmax" -v i="${ival99:-n/a}" -v pl="$plate" -v pm="$pmissed" 'BEGIN {
  printf "| %s | %s | %.1f / %.1f | %s | %s / %s |\n", c, f, p * 1000, x * 1000, i, pl, pm }'
echo
awk -F, 'NR > 1 { n++; ok += $3; f += $4; if ($6 > mx) mx = $6; p += $5 }
  END { printf "| bursts | scrapes ok | failed | p50 latency, mean over bursts (ms) | max latency (ms) |\n|---|---|---|---|---|\n| %d | %d | %d | %.1f | %.1f |\n", n, ok, f, (n ? p / n : 0), mx }' "$OUT/bursts.csv"
if [ "$ngaps" -gt 0 ]; then
  echo
  echo "| gap start | end | missed | late (ms) | span (s) | reason | second of the run's minute at its end (bursts at 30) | during a burst |"
  echo "|---|---|---|---|---|---|---|---|"
  awk -F'\t' '{ printf "| %s | %s | %s | %s | %s | %s | %s | %s |\n", $1, $2, $3, $4, $5, $6, $7, $8 }' "$OUT/gaps.burst.tsv"
fi
echo
echo "series (every 60 s): $OUT/series.csv; bursts: $OUT/bursts.csv; gaps: $OUT/gaps.burst.tsv; recorder's stderr: $OUT/stderr"
