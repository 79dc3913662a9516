#!/usr/bin/env bash
# bench/accuracy.sh — how often `memdiag analyze` names the right culprit
# on real runs: the verdict scenarios of e2e/verdict_test.go (a loaded web
# service in a memory-limited slice, real timer units fired at their
# OnCalendar times, in-app schedules, bystanders, decoys), each run N
# times. Not part of CI: each run records 36 s, so -n 3 takes ~20 min.
#
#   bench/accuracy.sh              # every scenario, 3 runs each
#   bench/accuracy.sh -n 5 -s 'bystander|coalesced'
#   bench/accuracy.sh -k DIR       # keep each run's recording and JSON in DIR
#
# Per scenario and overall it prints, for the top culprit (culprits[0] of
# analyze --format json):
#   precision = runs whose top culprit is right / runs that named one
#   recall    = positive runs whose top culprit is right / positive runs
#   false     = culprits named anywhere in the list that the scenario
#               does not allow (negative controls allow none)
# Kinds: positive (the scenario's job must be first), negative (nothing
# may be named: calm), either (one burst or sustained pressure: naming the
# process that did it, or nothing, is right). "right" counts runs whose
# top culprit is right by that rule.
#
# Needs: root (cgroups, swap file, unit files), go, jq, systemd-analyze,
# python3. Runs the scenarios one at a time under the e2e lock, so it
# waits while another engineer's e2e test holds it.
set -euo pipefail
N=3; SEL='.*'; KEEP=""
while getopts "n:s:k:" o; do
  case $o in n) N=$OPTARG;; s) SEL=$OPTARG;; k) KEEP=$OPTARG;; *) exit 2;; esac
done
[ "$(id -u)" = 0 ] || { echo "accuracy.sh: needs root (cgroups, swap file, unit files)" >&2; exit 2; }
command -v jq >/dev/null || { echo "accuracy.sh: missing jq: apt-get install jq" >&2; exit 2; }
cd "$(dirname "$0")/.."
out=$(mktemp /tmp/memdiag-accuracy.XXXXXX.jsonl)
trap 'rm -f "$out"' EXIT
scenarios=$(sed -n 's/^\tt\.Run("\([a-z-]*\)", func.*/\1/p' e2e/verdict_test.go | grep -E "^($SEL)$" || true)
[ -n "$scenarios" ] || { echo "accuracy.sh: no scenario matches '$SEL'" >&2; exit 2; }
go test -c -o "$(dirname "$out")/memdiag-accuracy-e2e.test" ./e2e
bin="$(dirname "$out")/memdiag-accuracy-e2e.test"
echo "# memdiag accuracy: $(date -u +%FT%TZ), commit $(git rev-parse --short HEAD), $(uname -r), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# command: bench/accuracy.sh -n $N${SEL:+ -s '$SEL'}"
for ((i = 1; i <= N; i++)); do
  for s in $scenarios; do
    # The test's own verdict (pass/fail) is in the JSON line; a run whose
    # harness failed before analyze wrote none and is reported below.
    (cd e2e && MEMDIAG_E2E=1 MEMDIAG_ACCURACY_OUT="$out" ${KEEP:+MEMDIAG_E2E_KEEP="$KEEP"} \
      "$bin" -test.run "^TestVerdict\$/^$s\$" -test.count=1 -test.timeout=10m >"$out.$s.$i.log" 2>&1) || true
    if [ "$(grep -c "\"scenario\":\"$s\"" "$out")" -lt "$i" ]; then
      echo "run $i of $s wrote no result (harness failure):" >&2
      tail -n 20 "$out.$s.$i.log" >&2
    fi
    rm -f "$out.$s.$i.log"
  done
done
rm -f "$bin"
echo
echo "| scenario | kind | runs | right | named a culprit | top-1 precision | top-1 recall | false culprits | top culprits seen |"
echo "|---|---|---:|---:|---:|---:|---:|---:|---|"
jq -rs '
  def kind: if (.want | length) == 0 then "negative" elif .none_ok then "either" else "positive" end;
  def right: if .top == "" then ((.want | length) == 0 or .none_ok) else (.top as $t | (.want // []) | index($t)) != null end;
  def row($name; $rs):
    ($rs | length) as $n
    | ($rs | map(select(right)) | length) as $ok
    | ($rs | map(select(.top != "")) | length) as $named
    | ($rs | map(select(.top != "" and right)) | length) as $tp
    | ($rs | map(select(kind == "positive")) | length) as $pos
    | ($rs | map(select(kind == "positive" and right)) | length) as $posok
    | ($rs | map(.false | length) | add // 0) as $false
    | [$name, (if $name == "**all**" then "" else ($rs | map(kind) | unique | join(", ")) end),
       ($n | tostring), "\($ok)/\($n)", ($named | tostring),
       (if $named > 0 then "\($tp)/\($named)" else "–" end),
       (if $pos > 0 then "\($posok)/\($pos)" else "–" end),
       ($false | tostring),
       ($rs | map(if .top == "" then "(none)" else .top end) | group_by(.) | map("\(.[0]) ×\(length)") | join(", "))]
    | "| " + join(" | ") + " |";
  (group_by(.scenario) | map(row(.[0].scenario; .)) | .[]),
  row("**all**"; .)
' "$out"
