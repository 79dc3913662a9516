#!/usr/bin/env bash
# bench/fixedcost.sh — watch's CPU per sample against the C keep-fd floor,
# and the service (`record --listen`, scraped every second) against watch,
# in one run, interleaved (issue #32). Run as root:
#
#   sudo bench/fixedcost.sh                          # N = 1000 5000, RSS at 10000, 30 s, 2 rounds
#   sudo bench/fixedcost.sh -n "1000" -m "" -t 20 -r 1 -o /tmp/fc
#   sudo bench/fixedcost.sh -b /tmp/memdiag-before   # and that build's watch and listen too
#
# For each N of -n it starts N idle `sleep` processes (ended by PID), then
# runs, for T seconds each, in alternating order (odd rounds forward, even
# rounds backward):
#
#   floor   bench/floorc/keepfd: the files watch reads, kept open and
#           pread each interval, parsed by nothing (C, no runtime);
#   watch   memdiag watch --interval 1s --quiet --force --out REC.jsonl.gz
#           (default collectors: sampler, events listener, onset watcher,
#           timers inventory, eBPF chain where the kernel has it);
#   listen  memdiag record --interval 1s --listen 127.0.0.1:PORT into a
#           fresh store, GET /metrics every second by curl (its own
#           process, not counted).
#
# CPU per sample = user+sys of the run (/usr/bin/time) / samples written
# (the floor: / intervals); peak RSS is time's %M; GCs are the lines
# GODEBUG=gctrace=1 wrote. With -b BIN, watch@base and listen@base run
# that memdiag binary (an earlier build) the same way, in the same
# rotation, for a before/after in one run. For each N of -m (RSS only) watch and listen run
# once.
#
# A run's CPU includes memdiag's start (the baseline scan of every
# process, the timer inventory, the eBPF chain's BTF): ~0.2 s at N = 1000,
# a third of a 30 s run's. So each memdiag tool also runs once for 1 s
# (2 samples) per N, and the "steady" column is the CPU of a sample once
# running: (CPU of the T runs − CPU of the 1 s run) / (their samples −
# 2), what a recorder left running pays; the floor has no start to take
# out. Prints a Markdown table with the ratios watch/floor and
# listen/watch, the load average and the exec/exit events recorded
# in each run (the host's process churn, which the events listener pays for).
# Needs: go, cc, curl, time.
set -euo pipefail
NS="1000 5000"; MS="10000"; T=30; ROUNDS=2; OUT=""; BASE=""
while getopts "n:m:t:r:o:b:" o; do
  case $o in n) NS=$OPTARG;; m) MS=$OPTARG;; t) T=$OPTARG;; r) ROUNDS=$OPTARG;; o) OUT=$OPTARG;; b) BASE=$OPTARG;; *) exit 2;; esac
done
[ "$(id -u)" = 0 ] || { echo "run as root: memdiag must see every process's /proc/PID/io" >&2; exit 2; }
for c in cc curl /usr/bin/time; do command -v "$c" >/dev/null || { echo "missing $c" >&2; exit 2; }; done
cd "$(dirname "$0")/.."
OUT=${OUT:-$(mktemp -d /tmp/memdiag-fixedcost.XXXXXX)}
mkdir -p "$OUT"
ulimit -n 65536 2>/dev/null || true # two descriptors a process kept open, at N = 10000
idle=(); scraper=""
cleanup() {
  [ -n "$scraper" ] && kill "$scraper" 2>/dev/null || true
  for p in "${idle[@]:-}"; do [ -n "$p" ] && kill "$p" 2>/dev/null || true; done
}
trap cleanup EXIT
go build -o "$OUT/memdiag" . && cc -O2 -o "$OUT/keepfd" bench/floorc/keepfd.c
[ -z "$BASE" ] || cp "$BASE" "$OUT/memdiag-base"
port=$((20000 + RANDOM % 20000))

# run_tool NAME [SECONDS]: one run of T (or SECONDS) seconds; prints
# "NAME cpu_ms_per_sample rss_kib gcs samples events cpu_ms_total"
run_tool() {
  local name=$1 T=${2:-$T} d="$OUT/run.$1" samples events=0 gcs=0 bin="$OUT/memdiag"
  rm -rf "$d"; mkdir -p "$d"
  case $name in *@base) bin="$OUT/memdiag-base";; esac
  case ${name%@base} in
    floor)
      /usr/bin/time -f "%e %U %S %M" -o "$d/time" timeout -s INT "$T" "$OUT/keepfd" 1000 2>"$d/stderr" || true
      samples=$(grep -o 'intervals: [0-9]*' "$d/stderr" | cut -d' ' -f2) ;;
    watch)
      GODEBUG=gctrace=1 /usr/bin/time -f "%e %U %S %M" -o "$d/time" "$bin" watch --interval 1s \
        --duration "${T}s" --quiet --force --out "$d/rec.jsonl.gz" >/dev/null 2>"$d/stderr" || true
      samples=$(zcat "$d/rec.jsonl.gz" | grep -c '"type":"sample"' || true)
      events=$( (zcat "$d/rec.jsonl.gz" | grep -o '"kind":"e[a-z]*"' || true) | wc -l) # a quiet host may have none
      gcs=$(grep -c '^gc [0-9]' "$d/stderr" || true) ;;
    listen)
      (while sleep 1; do curl -s -o /dev/null "http://127.0.0.1:$port/metrics" || true; done) &
      scraper=$!
      GODEBUG=gctrace=1 /usr/bin/time -f "%e %U %S %M" -o "$d/time" "$bin" record --store "$d/store" \
        --interval 1s --segment 24h --duration "${T}s" --max-age 0 --max-size 0 \
        --listen "127.0.0.1:$port" >/dev/null 2>"$d/stderr" || true
      kill "$scraper" 2>/dev/null || true; wait "$scraper" 2>/dev/null || true; scraper=""
      samples=0
      for f in "$d"/store/memdiag-*.jsonl.gz; do
        samples=$((samples + $(zcat "$f" | grep -c '"type":"sample"')))
        events=$((events + $( (zcat "$f" | grep -o '"kind":"e[a-z]*"' || true) | wc -l)))
      done
      gcs=$(grep -c '^gc [0-9]' "$d/stderr" || true) ;;
  esac
  read -r e u s m < <(tail -n 1 "$d/time")
  awk -v n="$name" -v u="$u" -v s="$s" -v k="$samples" -v m="$m" -v g="$gcs" -v ev="$events" \
    'BEGIN{printf "%s %.3f %d %d %d %d %.0f\n", n, (u+s)*1000/(k>0?k:1), m, g, k, ev, (u+s)*1000}'
}

spawn() { idle=(); for ((i = 0; i < $1; i++)); do sleep 1000000 & idle+=($!); done; sleep 2; }
unspawn() { for p in "${idle[@]}"; do kill "$p" 2>/dev/null || true; done; wait "${idle[@]}" 2>/dev/null || true; idle=(); }

echo "# memdiag fixed-cost bench: $(date -u +%FT%TZ), $(uname -r), $(nproc) cores, T=${T}s, rounds=$ROUNDS, at $(git rev-parse --short HEAD)"
echo "# command: bench/fixedcost.sh -n \"$NS\" -m \"$MS\" -t $T -r $ROUNDS"
echo
echo "| N (host processes) | tool | CPU ms/sample, per round | mean | steady ms/sample | peak RSS MiB | GCs per run | load avg 1 min, per run | exec/exit events recorded, per run | ratio | steady ratio |"
echo "|---|---|---|---:|---:|---:|---:|---|---|---|---|"
tools=(floor watch listen); [ -z "$BASE" ] || tools+=(watch@base listen@base)
for n in $NS; do
  spawn "$n"
  hostp=$(ls /proc | grep -c '^[0-9]')
  declare -A cpu=() rss=() gc=() load=() ev=() tot=() smp=() steady=()
  for ((r = 0; r < ROUNDS; r++)); do
    order=("${tools[@]}")
    if ((r % 2 == 1)); then order=(); for ((k = ${#tools[@]} - 1; k >= 0; k--)); do order+=("${tools[$k]}"); done; fi
    for tl in "${order[@]}"; do
      read -r name c m g k e t < <(run_tool "$tl")
      cpu[$name]="${cpu[$name]:-}${cpu[$name]:+ }$c"
      tot[$name]=$(( ${tot[$name]:-0} + t )); smp[$name]=$(( ${smp[$name]:-0} + k ))
      rss[$name]=$(( m > ${rss[$name]:-0} ? m : ${rss[$name]:-0} ))
      gc[$name]="${gc[$name]:-}${gc[$name]:+, }$g"
      load[$name]="${load[$name]:-}${load[$name]:+, }$(cut -d' ' -f1 /proc/loadavg)"
      ev[$name]="${ev[$name]:-}${ev[$name]:+, }$e"
      echo "$n $name round $((r + 1)): $c ms/sample, $m KiB, $g GCs, $k samples, $e events" >&2
    done
  done
  # The start taken out: one 1 s run of each memdiag tool.
  for tl in "${tools[@]}"; do
    [ "$tl" = floor ] && continue
    read -r name c m g k e t < <(run_tool "$tl" 1)
    steady[$tl]=$(awk -v a="${tot[$tl]}" -v b="$t" -v n="${smp[$tl]}" -v r="$ROUNDS" -v k="$k" 'BEGIN{printf "%.2f", (a - r*b)/(n - r*k)}')
    echo "$n $tl 1 s run: $t ms CPU, $k samples; steady ${steady[$tl]} ms/sample" >&2
  done
  mean() { awk -v l="$1" 'BEGIN{n=split(l,a," "); for(i=1;i<=n;i++)s+=a[i]; printf "%.2f", s/n}'; }
  f=$(mean "${cpu[floor]}"); w=$(mean "${cpu[watch]}"); l=$(mean "${cpu[listen]}")
  steady[floor]=$f
  for tl in "${tools[@]}"; do
    ratio=""; sratio=""
    case $tl in
      watch|watch@base) sratio=$(awk -v a="${steady[$tl]}" -v b="$f" 'BEGIN{printf "%.2f× floor", a/b}') ;;
      listen) sratio=$(awk -v a="${steady[listen]}" -v b="${steady[watch]}" 'BEGIN{printf "%.2f× watch", a/b}') ;;
      listen@base) sratio=$(awk -v a="${steady[$tl]}" -v b="${steady[watch@base]}" 'BEGIN{printf "%.2f× watch@base", a/b}') ;;
    esac
    case $tl in
      watch|watch@base) ratio=$(awk -v a="$(mean "${cpu[$tl]}")" -v b="$f" 'BEGIN{printf "%.2f× floor", a/b}') ;;
      listen) ratio=$(awk -v a="$l" -v b="$w" 'BEGIN{printf "%.2f× watch", a/b}') ;;
      listen@base) ratio=$(awk -v a="$(mean "${cpu[$tl]}")" -v b="$(mean "${cpu[watch@base]}")" 'BEGIN{printf "%.2f× watch@base", a/b}') ;;
    esac
    evs=${ev[$tl]}; [ "$tl" = floor ] && evs="–"
    gcs=${gc[$tl]}; [ "$tl" = floor ] && gcs="–"
    echo "| $n ($hostp) | $tl | $(echo "${cpu[$tl]}" | sed 's/ /, /g') | $(mean "${cpu[$tl]}") | ${steady[$tl]} | $(awk -v m="${rss[$tl]}" 'BEGIN{printf "%.1f", m/1024}') | $gcs | ${load[$tl]} | $evs | $ratio | $sratio |"
  done
  unset cpu rss gc load ev tot smp steady
  unspawn
done
for n in $MS; do
  spawn "$n"
  hostp=$(ls /proc | grep -c '^[0-9]')
  rtools=(watch listen); [ -z "$BASE" ] || rtools+=(watch@base listen@base)
  for tl in "${rtools[@]}"; do
    read -r name c m g k e t < <(run_tool "$tl")
    echo "| $n ($hostp) | $tl (RSS run) | $c | $c | | $(awk -v m="$m" 'BEGIN{printf "%.1f", m/1024}') | $g | $(cut -d' ' -f1 /proc/loadavg) | $e | | |"
  done
  unspawn
done
echo
echo "runs kept in $OUT (run.NAME/: time, stderr with gctrace, recording)"
