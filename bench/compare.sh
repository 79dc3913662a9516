#!/usr/bin/env bash
# bench/compare.sh — what `memdiag watch` costs next to pidstat, atop and a
# floor reader, for populations of idle processes. Run as root on an
# otherwise idle machine:
#
#   sudo bench/compare.sh                 # N = 100 1000 5000, 30 s per tool, 2 rounds
#   sudo bench/compare.sh -n "100" -t 20 -r 1
#
# For each N it starts N idle processes (ended by PID at the end), then
# runs each tool for T seconds at a 1 s interval under /usr/bin/time, in
# alternating order (round 1 forward, round 2 backward), and prints a
# Markdown table: CPU ms per sample (user+sys of the whole process tree),
# % of one core, peak RSS, bytes written per hour, ratio to the floor.
# Needs: go, sysstat (pidstat, sadc), atop, time (apt-get install sysstat atop time).
set -euo pipefail
NS="100 1000 5000"; T=30; ROUNDS=2
while getopts "n:t:r:" o; do
  case $o in n) NS=$OPTARG;; t) T=$OPTARG;; r) ROUNDS=$OPTARG;; *) exit 2;; esac
done
[ "$(id -u)" = 0 ] || { echo "run as root: memdiag and pidstat must see every process's /proc/PID/io" >&2; exit 2; }
for c in pidstat atop /usr/bin/time /usr/lib/sysstat/sadc; do
  command -v "$c" >/dev/null || { echo "missing $c: apt-get install sysstat atop time" >&2; exit 2; }
done
cd "$(dirname "$0")/.."
tmp=$(mktemp -d /tmp/memdiag-bench.XXXXXX)
idle=()
cleanup() {
  for p in "${idle[@]:-}"; do [ -n "$p" ] && kill "$p" 2>/dev/null || true; done
  rm -rf "$tmp"
}
trap cleanup EXIT
go build -o "$tmp/memdiag" . && go build -o "$tmp/floor" ./bench/floor

# tool name -> command; output goes to $tmp/out.<name> (a file the tool writes, or its stdout)
run_tool() {
  local name=$1 out="$tmp/out.$1"
  rm -f "$out" "$out.gz"
  case $name in
    floor)        cmd=("$tmp/floor" -interval 1s) ;;
    memdiag)      cmd=("$tmp/memdiag" watch --interval 1s --quiet --no-timers --force --out "$out") ;;
    memdiag-gz)   cmd=("$tmp/memdiag" watch --interval 1s --quiet --no-timers --force --out "$out.gz") ;;
    # the sampler alone: no process-events listener, no stall-onset poller
    memdiag-core) cmd=("$tmp/memdiag" watch --interval 1s --quiet --no-timers --force --events off --stall-threshold 0 --out "$out") ;;
    pidstat-d)    cmd=(pidstat -d 1) ;;
    pidstat-dur)  cmd=(pidstat -d -u -r 1) ;;
    atop)         cmd=(atop -w "$out" 1) ;;
    sadc)         cmd=(/usr/lib/sysstat/sadc -S DISK 1 "$out") ;;
  esac
  /usr/bin/time -f "%e %U %S %M" -o "$tmp/time" timeout -s INT "$T" "${cmd[@]}" >"$tmp/stdout.$name" 2>"$tmp/stderr.$name" || true
  local bytes
  if [ -f "$out.gz" ]; then bytes=$(stat -c %s "$out.gz")
  elif [ -f "$out" ]; then bytes=$(stat -c %s "$out")
  else bytes=$(stat -c %s "$tmp/stdout.$name"); fi
  read -r e u s m < <(tail -n 1 "$tmp/time")
  # process exec/exit events memdiag recorded: the host's churn, which
  # the events listener pays for (docs/benchmarks.md)
  if [ "$name" = memdiag ]; then grep -o '"kind":"e[a-z]*"' "$out" | wc -l >>"$tmp/events"; fi
  echo "$name $e $u $s $m $bytes"
}

tools=(floor memdiag memdiag-gz memdiag-core pidstat-d pidstat-dur atop sadc)
echo "# memdiag bench: $(date -u +%FT%TZ), $(uname -r), $(nproc) cores, T=${T}s, rounds=$ROUNDS"
echo "# command: bench/compare.sh -n \"$NS\" -t $T -r $ROUNDS"
for n in $NS; do
  idle=()
  for ((i = 0; i < n; i++)); do sleep 1000000 & idle+=($!); done
  sleep 2
  declare -A cpu=() rss=() wr=()
  for ((r = 0; r < ROUNDS; r++)); do
    order=("${tools[@]}")
    if ((r % 2 == 1)); then order=(); for ((k = ${#tools[@]} - 1; k >= 0; k--)); do order+=("${tools[$k]}"); done; fi
    for tl in "${order[@]}"; do
      read -r name e u s m bytes < <(run_tool "$tl")
      cpu[$name]=$(awk -v a="${cpu[$name]:-0}" -v u="$u" -v s="$s" -v t="$T" 'BEGIN{printf "%.4f", a + (u+s)*1000/t}')
      rss[$name]=$(( m > ${rss[$name]:-0} ? m : ${rss[$name]:-0} ))
      wr[$name]=$(awk -v a="${wr[$name]:-0}" -v b="$bytes" -v t="$T" 'BEGIN{printf "%.0f", a + b*3600/t}')
    done
  done
  floor=$(awk -v c="${cpu[floor]}" -v r="$ROUNDS" 'BEGIN{print c/r}')
  echo
  echo "## N = $n idle processes ($(ls /proc | grep -c '^[0-9]') processes on the host, load average $(cut -d' ' -f1-3 /proc/loadavg))"
  echo
  echo "Process exec/exit events recorded by the memdiag runs (host churn): $(paste -sd+ "$tmp/events" | bc) in $ROUNDS × ${T} s"
  rm -f "$tmp/events"
  echo
  echo "| tool | CPU ms/sample | % of one core | peak RSS MiB | written MB/hour | × floor |"
  echo "|---|---:|---:|---:|---:|---:|"
  for tl in "${tools[@]}"; do
    awk -v n="$tl" -v c="${cpu[$tl]}" -v r="$ROUNDS" -v m="${rss[$tl]}" -v w="${wr[$tl]}" -v f="$floor" \
      'BEGIN{ms=c/r; printf "| %s | %.2f | %.2f | %.1f | %.2f | %.2f |\n", n, ms, ms/10, m/1024, w/r/1e6, ms/f}'
  done
  for p in "${idle[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  idle=()
  unset cpu rss wr
done
