#!/usr/bin/env bash
# Two checks of what a new user meets, run by .ci/run as root:
#
# fresh-clone.sh root: the README's test command, `go test ./...`, as
#    root without MEMDIAG_E2E, before the end-to-end suite. Around it the
#    host's state is compared: cgroups, active swap, systemd unit files,
#    kernel.task_delayacct and memdiag's files under /var/tmp and /run.
#    Plain `go test ./...` must leave all of them as they were: only
#    MEMDIAG_E2E=1 (or =require) lets a test change the host.
# fresh-clone.sh nobody: a fresh clone, built and tested as an
#    unprivileged user (nobody) with a clean HOME, GOPATH and GOCACHE (every
#    dependency downloaded and compiled): `go install` of the clone,
#    `memdiag --version`, then `go test ./...`. .ci/run runs it beside
#    the end-to-end suite, at the lowest CPU and I/O priority, its files
#    in /dev/shm (no disk writes under the e2e tests' disk readings): so
#    the host-wide comparison above cannot be made then (the e2e tests
#    change the host), and what it checks is what nobody can change:
#    that no file owned by nobody appeared outside its work folder in
#    /tmp, /var/tmp, /dev/shm or /run (its TMPDIR is inside that folder).
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

mode=${1:-}
case $mode in
  root | nobody) ;;
  *) echo "usage: $0 root|nobody" >&2; exit 2 ;;
esac

if [ "$mode" = root ]; then
  before=$(mktemp)
  trap 'rm -f "$before"' EXIT
  snapshot >"$before"
  start=$(date +%s)
  env -u MEMDIAG_E2E go test -count=1 ./...
  echo "ok: go test ./... as root without MEMDIAG_E2E took $(($(date +%s) - start)) s"
  check_unchanged "go test ./... as root without MEMDIAG_E2E" "$before"
  exit 0
fi

# As nobody, in a fresh clone, with nothing of root's Go state.
work=$(mktemp -d /dev/shm/memdiag-fresh.XXXXXX)
trap 'rm -rf "$work"' EXIT
nobodys_files() { # outside $work
  find /tmp /var/tmp /dev/shm /run -xdev -user nobody 2>/dev/null | grep -v "^$work" | sort || true
}
before=$work/nobodys-files
nobodys_files >"$before"
git clone -q --no-hardlinks "$repo" "$work/src"
mkdir -p "$work/home" "$work/tmp"
chown -R nobody:nogroup "$work/src" "$work/home" "$work/tmp"
chmod 755 "$work"
goroot=$(go env GOROOT)
# -timeout=50m, not go test's 10 min per package binary: .ci/run runs
# this at SCHED_IDLE beside the suite, where it gets the CPU only when
# the suite leaves it idle; cmd's binary (2 min on a quiet host) passed
# 10 min so with both cores kept busy beside it (docs/ci.md, the
# eighteenth session). 50 min is the suite's own bound; once the suite
# ends, this run has the CPU.
as_nobody() {
  runuser -u nobody -- env -i PATH="$goroot/bin:/usr/local/bin:/usr/bin:/bin" HOME="$work/home" \
    GOPATH="$work/home/go" GOCACHE="$work/home/cache" GOTOOLCHAIN=local GOFLAGS="-count=1 -timeout=50m" TMPDIR="$work/tmp" \
    bash -c "cd '$work/src' && $1"
}
start=$(date +%s)
version=$(as_nobody 'go install . && "$(go env GOPATH)/bin/memdiag" --version')
echo "$version"
# go install in a git clone records the commit: the version names it.
case $version in
  *"(devel)"*) echo "FAIL: --version of a go install from a clone says (devel)"; exit 1 ;;
esac
as_nobody 'go test ./...'
echo "ok: go install and go test ./... as nobody in a fresh clone took $(($(date +%s) - start)) s"
added=$(nobodys_files | comm -13 "$before" - || true)
if [ -n "$added" ]; then
  # Not nobody's run's own if gone in a while: the e2e suite beside it
  # runs a helper as nobody for a moment (diskio's TestScanAsNobody).
  sleep 15
  added=$(nobodys_files | comm -13 "$before" - | comm -12 - <(echo "$added") || true)
fi
if [ -n "$added" ]; then
  echo "$added"
  echo "FAIL: go test ./... as nobody left $(wc -l <<<"$added") files outside its work folder (above)"
  exit 1
fi
echo "ok: go test ./... as nobody left no file of its own in /tmp, /var/tmp, /dev/shm or /run"
