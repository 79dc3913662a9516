#!/usr/bin/env bash
# Two checks of what a new user meets, run by .ci/run as root before the
# end-to-end suite:
#
# 1. A fresh clone, built and tested as an unprivileged user (nobody) with
#    a clean HOME and GOPATH: `go install` of the clone, `memdiag
#    --version`, then the README's test command, `go test ./...`.
# 2. The README's test command as root without MEMDIAG_E2E, beside 1.
#
# Around both, the host's state is compared: cgroups, active swap, systemd
# unit files, kernel.task_delayacct and memdiag's files under /var/tmp and
# /run. Plain `go test ./...` must leave all of them as they were: only
# MEMDIAG_E2E=1 (or =require) lets a test change the host.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD

snapshot() {
  set +o pipefail # find reports the directories this host lacks
  echo "# cgroups"
  # process_api/<id> are the groups this host's command runner makes for
  # every command it starts (another engineer's shell, a helper's build):
  # they come and go beside the tests, which never create one there.
  find /sys/fs/cgroup -mindepth 1 -maxdepth 4 -type d 2>/dev/null | grep -v '^/sys/fs/cgroup/\([^/]*/\)\?process_api/' | sort
  echo "# swap"
  tail -n +2 /proc/swaps | awk '{print $1}' | sort
  echo "# unit files"
  find /etc/systemd /run/systemd/system /run/systemd/transient /usr/lib/systemd/system /lib/systemd/system \
    \( -name '*.timer' -o -name '*.service' \) 2>/dev/null | sort
  echo "# sysctl"
  cat /proc/sys/kernel/task_delayacct 2>/dev/null || true
  echo "# memdiag files"
  ls -d /var/tmp/memdiag-* /run/memdiag* 2>/dev/null | grep -v '/var/tmp/memdiag-e2e\(-uml\)\?.lock$' || true
  set -o pipefail
}

check_unchanged() { # label before-file
  # Only what appeared counts: plain `go test ./...` must create nothing
  # on the host. What went away was someone else's (an engineer's
  # benchmark or e2e run on a shared machine, cleaning up beside us).
  local after added
  after=$(mktemp)
  snapshot >"$after"
  added=$(diff "$2" "$after" | sed -n 's/^> //p' || true)
  if [ -n "$added" ]; then
    diff -u "$2" "$after" || true
    echo "FAIL: $1 changed the host: it added $(wc -l <<<"$added") entries (the + lines above)"
    rm -f "$after"
    exit 1
  fi
  rm -f "$after"
  echo "ok: $1 left cgroups, swap, unit files, kernel.task_delayacct and /var/tmp, /run as they were"
}

work=$(mktemp -d /tmp/memdiag-fresh.XXXXXX)
trap 'rm -rf "$work"' EXIT
before=$work/before
snapshot >"$before"

# 1. As nobody, in a fresh clone, with nothing of root's Go state.
git clone -q --no-hardlinks "$repo" "$work/src"
mkdir -p "$work/home"
chown -R nobody:nogroup "$work/src" "$work/home"
chmod 755 "$work"
goroot=$(go env GOROOT)
as_nobody() {
  runuser -u nobody -- env -i PATH="$goroot/bin:/usr/local/bin:/usr/bin:/bin" HOME="$work/home" \
    GOPATH="$work/home/go" GOCACHE="$work/home/cache" GOTOOLCHAIN=local GOFLAGS=-count=1 \
    bash -c "cd '$work/src' && $1"
}
version=$(as_nobody 'go install . && "$(go env GOPATH)/bin/memdiag" --version')
echo "$version"
# go install in a git clone records the commit: the version names it.
case $version in
  *"(devel)"*) echo "FAIL: --version of a go install from a clone says (devel)"; exit 1 ;;
esac
# 1 and 2 run side by side: the first is mostly building from an empty
# cache, the second mostly tests waiting on their subprocesses, so
# together they take little more than the longer one (docs/ci.md). Each
# one's output is kept and shown whole once both have ended.
start=$(date +%s)
as_nobody 'go test ./...' >"$work/nobody.log" 2>&1 &
nobody=$!

# 2. As root, without MEMDIAG_E2E.
root_status=0
env -u MEMDIAG_E2E go test -count=1 ./... >"$work/root.log" 2>&1 || root_status=$?
root_took=$(($(date +%s) - start))
nobody_status=0
wait "$nobody" || nobody_status=$?
nobody_took=$(($(date +%s) - start))
echo "# go test ./... as nobody in a fresh clone:"
cat "$work/nobody.log"
echo "# go test ./... as root without MEMDIAG_E2E:"
cat "$work/root.log"
[ "$nobody_status" = 0 ] || echo "FAIL: go test ./... as nobody in a fresh clone"
[ "$root_status" = 0 ] || echo "FAIL: go test ./... as root without MEMDIAG_E2E"
[ "$nobody_status" = 0 ] && [ "$root_status" = 0 ] || exit 1
echo "ok: go test ./... as nobody in a fresh clone took $nobody_took s"
echo "ok: go test ./... as root without MEMDIAG_E2E took $root_took s (beside the first)"
check_unchanged "go test ./... as nobody, and as root without MEMDIAG_E2E," "$before"
