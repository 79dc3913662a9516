# bench/lib.sh — sourced by the bench scripts that time memdiag with
# /usr/bin/time over a few runs (analyze.sh, html.sh, hugelines.sh).
#
# bench_setup NAME RUNS "$@" parses the script's options -r RUNS (default
# RUNS) and -k (keep the generated files), checks for /usr/bin/time, goes
# to the repository's top and makes $tmp (/tmp/memdiag-bench-NAME.XXXXXX),
# removed on exit unless -k. It sets RUNS, KEEP and tmp.
bench_setup() {
  local name=$1 o OPTIND=1
  RUNS=$2
  KEEP=0
  shift 2
  while getopts "r:k" o; do
    case $o in r) RUNS=$OPTARG;; k) KEEP=1;; *) exit 2;; esac
  done
  command -v /usr/bin/time >/dev/null || { echo "missing /usr/bin/time: apt-get install time" >&2; exit 2; }
  cd "$(dirname "${BASH_SOURCE[0]}")/.."
  tmp=$(mktemp -d "/tmp/memdiag-bench-$name.XXXXXX")
  trap bench_cleanup EXIT
}

bench_cleanup() {
  if [ "$KEEP" = 1 ]; then echo "kept $tmp" >&2; else rm -rf "$tmp"; fi
}
