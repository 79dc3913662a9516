#!/usr/bin/env bash
# Runs every fuzz target of memdiag (each func FuzzX in a _test.go file,
# found in the tree so none is forgotten) for the given budget each:
#   scripts/fuzz.sh 1m       # make fuzz: one minute each
#   scripts/fuzz.sh 2000x    # .ci/run: 2000 executions each
# A crash fails the run and the input is written to the package's
# testdata/fuzz/FuzzX/; keep it there and add a regression test.
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
set -euo pipefail
cd "$(dirname "$0")/.."
fuzztime=${1:-1m}
module=$(go list -m)
cache=$(go env GOCACHE)/fuzz
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
log=$tmp/log
n=0 flakes=0
# count_inputs DIR: how many inputs a corpus directory holds (0 if none yet).
count_inputs() { if [ -d "$1" ]; then find "$1" -type f | wc -l; else echo 0; fi; }
built=
while IFS=: read -r file line; do
  dir=$(dirname "$file")
  target=$(sed -E 's/^func (Fuzz[A-Za-z0-9_]*).*/\1/' <<<"$line")
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
      exit 1
    fi
  fi
  echo " $((SECONDS - start)) s"
  n=$((n + 1))
done < <(grep -rH --include='*_test.go' -E '^func Fuzz[A-Za-z0-9_]*\(f \*testing\.F\)' . | grep -v '^./.git/' | sed -E 's/^\.\///' | sort)
echo "$n fuzz targets ran for $fuzztime each ($flakes deadline flakes)"
