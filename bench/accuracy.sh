#!/usr/bin/env bash
# bench/accuracy.sh — how often `memdiag analyze` names the right culprit
# on real runs: the verdict scenarios of e2e/verdict_test.go (a loaded web
# service in a memory-limited slice, real timer units fired at their
# OnCalendar times, in-app schedules, bystanders, decoys), each run N
# times. Not part of CI: a round of the 14 scenarios took ~16 min alone (-l 1), so -n 3 ~50 min; the 15
# of 2026-12-07 (newcomer-together added) took 9 min two at a time (-l 2).
#
#   bench/accuracy.sh              # every scenario, 3 runs each
#   bench/accuracy.sh -n 5 -s 'bystander|coalesced'
#   bench/accuracy.sh -k DIR       # keep each run's recording and JSON in DIR/<time>-round<i>/
#   bench/accuracy.sh -e off       # watch --ebpf off in every scenario (default: each scenario's own,
#                                  # auto: the page-cache chain traced where it loads)
#   bench/accuracy.sh -l 2         # two scenarios at a time, as CI runs them (default 1: each alone)
#
# Per scenario and overall it prints, for the top culprit (culprits[0] of
# analyze --format json):
#   precision = runs whose top culprit is right / runs that named one
#   recall    = positive runs whose top culprit is right / positive runs
#   false     = culprits named anywhere in the list that the scenario
#               does not allow (negative controls allow none)
#   undecided = runs that named nothing but left jobs undecided (fired
#               together, correlation cannot tell them apart:
#               docs/analyze.md "Undecided"), with the right job among them
#               / all runs left undecided; neither right nor false
# Kinds: positive (the scenario's job must be first), negative (nothing
# may be named: calm), either (one burst or sustained pressure: naming the
# process that did it, or nothing, is right). "right" counts runs whose
# top culprit is right by that rule.
#
# Needs: root (cgroups, swap file, unit files), go, jq, systemd-analyze,
# python3. Runs the scenarios one at a time under the e2e lock, so it
# waits while another engineer's e2e test holds it.
set -euo pipefail
N=3; SEL='.*'; KEEP=""; OUT=""; EBPF=""; LANES=1
while getopts "n:s:k:o:e:l:" o; do
  case $o in n) N=$OPTARG;; s) SEL=$OPTARG;; k) KEEP=$OPTARG;; o) OUT=$OPTARG;; e) EBPF=$OPTARG;; l) LANES=$OPTARG;; *) exit 2;; esac
done
case $LANES in 1|2) ;; *) echo "accuracy.sh: -l takes 1 or 2 (scenarios at a time)" >&2; exit 2;; esac
# The test writes the kept files without making the directory (and from
# e2e/): make it, and take its absolute path.
if [ -n "$KEEP" ]; then mkdir -p "$KEEP"; KEEP=$(cd "$KEEP" && pwd); fi
[ "$(id -u)" = 0 ] || { echo "accuracy.sh: needs root (cgroups, swap file, unit files)" >&2; exit 2; }
command -v jq >/dev/null || { echo "accuracy.sh: missing jq: apt-get install jq" >&2; exit 2; }
cd "$(dirname "$0")/.."
# -o FILE appends each run's JSON line to FILE and keeps it; the table is
# computed over the whole file, so runs of several invocations add up.
if [ -n "$OUT" ]; then out=$OUT; touch "$out"; else
  out=$(mktemp /tmp/memdiag-accuracy.XXXXXX.jsonl)
  trap 'rm -f "$out"' EXIT
fi
scenarios=$(sed -n 's/^\tt\.Run("\([a-z-]*\)", func.*/\1/p' e2e/verdict_test.go | grep -E "^($SEL)$" || true)
[ -n "$scenarios" ] || { echo "accuracy.sh: no scenario matches '$SEL'" >&2; exit 2; }
go test -c -o "$(dirname "$out")/memdiag-accuracy-e2e.test" ./e2e
bin="$(dirname "$out")/memdiag-accuracy-e2e.test"
echo "# memdiag accuracy: $(date -u +%FT%TZ), commit $(git rev-parse --short HEAD), $(uname -r), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# command: bench/accuracy.sh -n $N$( [ "$SEL" = '.*' ] || printf " -s '%s'" "$SEL")${EBPF:+ -e $EBPF} -l $LANES"
# One test process per round: the binaries are built once per round, and
# the scenarios run one after another (-l 1) or two at a time (-l 2, as in CI).
alt=$(echo $scenarios | tr ' ' '|')
for ((i = 1; i <= N; i++)); do
  before=$(wc -l <"$out")
  # Each round's recordings in a directory of its own (the test names
  # them by scenario only): -k DIR keeps DIR/<UTC time>-round<i>/.
  keep=""
  if [ -n "$KEEP" ]; then keep="$KEEP/$(date -u +%Y%m%dT%H%M%SZ)-round$i"; mkdir -p "$keep"; fi
  (cd e2e && env MEMDIAG_E2E=1 MEMDIAG_E2E_LANES="$LANES" MEMDIAG_ACCURACY_OUT="$out" ${keep:+MEMDIAG_E2E_KEEP="$keep"} ${EBPF:+MEMDIAG_E2E_EBPF="$EBPF"} \
    "$bin" -test.run "^TestVerdict\$/^($alt)\$" -test.count=1 -test.timeout=30m >"$out.$i.log" 2>&1) || true
  got=$(($(wc -l <"$out") - before))
  if [ "$got" -lt "$(echo $scenarios | wc -w)" ]; then
    echo "round $i wrote $got results for $(echo $scenarios | wc -w) scenarios (harness failure):" >&2
    grep -E "^\s*--- FAIL|panic|Fatal" "$out.$i.log" | head -20 >&2
  fi
  rm -f "$out.$i.log"
done
rm -f "$bin"
echo
echo "| scenario | kind | runs | right | named a culprit | top-1 precision | top-1 recall | false culprits | undecided | top culprits seen |"
echo "|---|---|---:|---:|---:|---:|---:|---:|---:|---|"
jq -rs '
  def kind: if (.want | length) == 0 then "negative" elif .none_ok then "either" else "positive" end;
  def right: if .top == "" then ((.want | length) == 0 or .none_ok) else (.top as $t | (.want // []) | index($t)) != null end;
  def und: .top == "" and ((.undecided // []) | length) > 0;
  def undright: und and ((.undecided // []) as $u | (.want // []) | any(. as $w | $u | index($w) != null));
  def row($name; $rs):
    ($rs | length) as $n
    | ($rs | map(select(right)) | length) as $ok
    | ($rs | map(select(.top != "")) | length) as $named
    | ($rs | map(select(.top != "" and right)) | length) as $tp
    | ($rs | map(select(kind == "positive")) | length) as $pos
    | ($rs | map(select(kind == "positive" and right)) | length) as $posok
    | ($rs | map(.false | length) | add // 0) as $false
    | ($rs | map(select(und)) | length) as $und
    | ($rs | map(select(undright)) | length) as $undok
    | [$name, (if $name == "**all**" then "" else ($rs | map(kind) | unique | join(", ")) end),
       ($n | tostring), "\($ok)/\($n)", ($named | tostring),
       (if $named > 0 then "\($tp)/\($named)" else "–" end),
       (if $pos > 0 then "\($posok)/\($pos)" else "–" end),
       ($false | tostring),
       (if $und > 0 then "\($undok)/\($und)" else "0" end),
       ($rs | map(if und then "(undecided: " + (.undecided | join(" or ")) + ")" elif .top == "" then "(none)" else .top end) | group_by(.) | map("\(.[0]) ×\(length)") | join(", "))]
    | "| " + join(" | ") + " |";
  (group_by(.scenario) | map(row(.[0].scenario; .)) | .[]),
  row("**all**"; .)
' "$out"
