#!/usr/bin/env bash
# Runs every fuzz target of memdiag (each func FuzzX in a _test.go file,
# found in the tree so none is forgotten) for the given budget each:
#   scripts/fuzz.sh 1m       # make fuzz: one minute each
#   scripts/fuzz.sh 2000x    # .ci/run: 2000 executions each
#   scripts/fuzz.sh 20s 'latency|FuzzReader$'   # only targets whose
#                            # "dir FuzzX" matches the extended regexp
# A crash fails the run (after the other targets have run) and the input
# is written to the package's testdata/fuzz/FuzzX/; keep it there and add
# a regression test.
#
# Each package's fuzzing test binary (coverage-instrumented, as go test
# -fuzz builds it) is built once with go test -c and run for each of its
# targets, in the package folder, with the fuzz cache go test would use:
# what `go test -run '^$' -fuzz '^FuzzX$'` does, without a link per target
# (that link was most of a 2000x run's time).
#
# A duration budget can end in "context deadline exceeded" with no input
# written: a race in Go's fuzzing coordinator at the -fuzztime deadline
# (go.dev/issue/75804, fixed in Go 1.27; seen here on a loaded machine).
# Such a run wrote no crasher and is not a failure: it is reported as a
# flake. CI uses a count budget, which has no deadline to race.
#
# Each target's executions are printed, from the engine's last "execs: N"
# line. A target that did not fuzz fails the run, after every target has
# run: under a count budget (2000x) all of the count must have run; under a
# duration budget at least MEMDIAG_FUZZ_MIN_EXECS (1000) must have. A
# target far under that is usually stalled on a large seed: the engine
# minimizes each new interesting input (up to -fuzzminimizetime, 60 s), and
# an input grown from a seed of kilobytes takes that long. Keep seeds
# small; run big real files as plain regression tests.
set -euo pipefail
cd "$(dirname "$0")/.."
fuzztime=${1:-1m}
only=${2:-}
module=$(go list -m)
cache=$(go env GOCACHE)/fuzz
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
log=$tmp/log
n=0 flakes=0
min_execs=${MEMDIAG_FUZZ_MIN_EXECS:-1000}
# want: executions a target must reach; a count budget needs all of them.
if [[ $fuzztime =~ ^([0-9]+)x$ ]]; then want=${BASH_REMATCH[1]}; else want=$min_execs; fi
slow=() crashed=()
# count_inputs DIR: how many inputs a corpus directory holds (0 if none yet).
count_inputs() { if [ -d "$1" ]; then find "$1" -type f | wc -l; else echo 0; fi; }
built=
while IFS=: read -r file line; do
  dir=$(dirname "$file")
  target=$(sed -E 's/^func (Fuzz[A-Za-z0-9_]*).*/\1/' <<<"$line")
  if [ -n "$only" ] && ! grep -qE -- "$only" <<<"$dir $target"; then continue; fi
  bin=$tmp/$(tr / _ <<<"$dir").test
  if [ "$built" != "$dir" ]; then
    start=$SECONDS
    go test -c -fuzz=. -o "$bin" "./$dir"
    echo "build ./$dir $((SECONDS - start)) s"
    built=$dir
  fi
  corpus="$dir/testdata/fuzz/$target"
  before=$(count_inputs "$corpus")
  start=$SECONDS
  echo -n "fuzz ./$dir $target ($fuzztime)"
  if ! (cd "$dir" && "$bin" -test.run='^$' -test.fuzz="^${target}\$" -test.fuzztime="$fuzztime" \
    -test.fuzzcachedir="$cache/$module/$dir" -test.paniconexit0 >"$log" 2>&1); then
    echo
    after=$(count_inputs "$corpus")
    if [ "$after" = "$before" ] && grep -q 'context deadline exceeded' "$log"; then
      echo "fuzz ./$dir $target: flake at the -fuzztime deadline (go.dev/issue/75804), no crasher written"
      flakes=$((flakes + 1))
    else
      cat "$log"
      echo "fuzz ./$dir $target failed"
      crashed+=("./$dir $target")
      n=$((n + 1))
      continue
    fi
  fi
  # The engine prints "fuzz: elapsed: 3s, execs: 21912 (7301/sec), ..."
  # every 3 s and once at the end; the last such line is the total.
  execs=$(sed -nE 's/^fuzz: elapsed: [^,]*, execs: ([0-9]+) .*/\1/p' "$log" | tail -n 1)
  if [ -z "$execs" ]; then
    echo " $((SECONDS - start)) s, executions unknown"
    grep -q 'context deadline exceeded' "$log" || slow+=("./$dir $target: no execs line")
  elif [ "$execs" -lt "$want" ]; then
    echo " $((SECONDS - start)) s, $execs execs: FAIL, under $want"
    slow+=("./$dir $target: $execs execs in $fuzztime, under $want")
  else
    echo " $((SECONDS - start)) s, $execs execs"
  fi
  n=$((n + 1))
done < <(grep -rH --include='*_test.go' -E '^func Fuzz[A-Za-z0-9_]*\(f \*testing\.F\)' . | grep -v '^./.git/' | sed -E 's/^\.\///' | sort)
echo "$n fuzz targets ran for $fuzztime each ($flakes deadline flakes)"
if [ ${#crashed[@]} -gt 0 ]; then
  echo "${#crashed[@]} fuzz targets failed:"
  printf '  %s\n' "${crashed[@]}"
fi
if [ ${#slow[@]} -gt 0 ]; then
  echo "${#slow[@]} fuzz targets did not fuzz (want $want executions each):"
  printf '  %s\n' "${slow[@]}"
fi
[ ${#crashed[@]} -eq 0 ] && [ ${#slow[@]} -eq 0 ]
