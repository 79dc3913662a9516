#!/bin/sh
# capture-hog.sh — as root on a hybrid cgroup host (v1 memory controller,
# v2 at /sys/fs/cgroup/unified), capture fixture roots while a hog runs in
# a 64 MiB cgroup v1 memory group, so reclaim, refault and swap counters
# move. Made testdata/linux-6.18-hog-*; see their SOURCE files.
#
# The hog writes a 300 MiB file with dd, reads it back with cat, then
# grows anonymous memory with `tail /dev/zero` (it buffers an endless line)
# until it has filled a 256 MiB swap file and is OOM-killed in its group
# (on the 6.18 VM that happened between the two captures).
# Everything it creates is named lru-fixture and removed at the end.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
v1=/sys/fs/cgroup/memory/lru-fixture
v2=/sys/fs/cgroup/unified/lru-fixture
swapf=/var/tmp/lru-fixture.swap
data=/var/tmp/lru-fixture.data
hog=

cleanup() {
	[ -n "$hog" ] && kill "$hog" 2>/dev/null || true
	sleep 1
	swapoff "$swapf" 2>/dev/null || true
	rm -f "$swapf" "$data"
	rmdir "$v1" "$v2" 2>/dev/null || true
}
trap cleanup EXIT

copy_cgroups() { # DEST
	d=$1/sys/fs/cgroup/unified/lru-fixture
	mkdir -p "$d"
	for f in "$v2"/*; do
		[ -f "$f" ] && [ -r "$f" ] && cat "$f" >"$d/$(basename "$f")" 2>/dev/null || rm -f "$d/$(basename "$f")"
	done
	d=$1/sys/fs/cgroup/memory/lru-fixture
	mkdir -p "$d"
	for f in cgroup.procs memory.limit_in_bytes memory.usage_in_bytes memory.max_usage_in_bytes \
		memory.failcnt memory.memsw.usage_in_bytes memory.oom_control memory.stat; do
		cat "$v1/$f" >"$d/$f"
	done
}

snap() { # NAME
	"$here/capture-proc.sh" "$here/$1"
	copy_cgroups "$here/$1"
	uname -r >"$here/$1/uname-r"
}

dd if=/dev/zero of="$swapf" bs=1M count=256 status=none
chmod 600 "$swapf"
mkswap "$swapf" >/dev/null
swapon "$swapf"
mkdir "$v1" "$v2"
echo 64M >"$v1/memory.limit_in_bytes"

sh -c 'echo $$ >'"$v1"'/cgroup.procs; echo $$ >'"$v2"'/cgroup.procs
	dd if=/dev/zero of='"$data"' bs=1M count=300 status=none
	cat '"$data"' >/dev/null
	exec tail /dev/zero' &
hog=$!

# Wait until the hog is in its anonymous phase and has begun to swap.
i=0
while [ "$(awk '$1=="pswpout"{print $2}' /proc/vmstat)" = "${pswpout0:=$(awk '$1=="pswpout"{print $2}' /proc/vmstat)}" ] && [ $i -lt 600 ]; do
	sleep 0.1; i=$((i+1))
done
sleep 1
snap linux-6.18-hog-t0
sleep 1
snap linux-6.18-hog-t1
