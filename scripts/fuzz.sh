#!/usr/bin/env bash
# Runs every fuzz target of memdiag (each func FuzzX in a _test.go file,
# found in the tree so none is forgotten) for the given time each:
#   scripts/fuzz.sh 1m      # make fuzz
#   scripts/fuzz.sh 4s      # .ci/run
# A crash fails the run and go test writes its input to the package's
# testdata/fuzz/FuzzX/; keep it there and add a regression test.
set -euo pipefail
cd "$(dirname "$0")/.."
fuzztime=${1:-1m}
log=$(mktemp)
trap 'rm -f "$log"' EXIT
n=0
while IFS=: read -r file line; do
  pkg=./$(dirname "$file")
  target=$(sed -E 's/^func (Fuzz[A-Za-z0-9_]*).*/\1/' <<<"$line")
  echo "fuzz $pkg $target ($fuzztime)"
  if ! go test "$pkg" -run '^$' -fuzz "^${target}\$" -fuzztime "$fuzztime" >"$log" 2>&1; then
    cat "$log"
    echo "fuzz $pkg $target failed"
    exit 1
  fi
  n=$((n + 1))
done < <(grep -rH --include='*_test.go' -E '^func Fuzz[A-Za-z0-9_]*\(f \*testing\.F\)' . | grep -v '^./.git/' | sed -E 's/^\.\///' | sort)
echo "$n fuzz targets ran for $fuzztime each"
