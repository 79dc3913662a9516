#!/bin/sh
export PATH=/usr/sbin:/usr/bin:/sbin:/bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t tmpfs tmpfs /run
mkdir -p /run/out && mount -t hostfs none /run/out -o /tmp/uml/out
O=/run/out/v2b; mkdir -p $O
uname -a > $O/uname.txt; cat /proc/cmdline > $O/cmdline.txt
mkdir /run/disk && mount -t ext4 /dev/ubda /run/disk && swapon /dev/ubdb
cat /proc/swaps > $O/swaps
mount -t cgroup2 none /sys/fs/cgroup
cat /sys/fs/cgroup/cgroup.controllers > $O/root-cgroup.controllers
echo +memory > /sys/fs/cgroup/cgroup.subtree_control
snap() { # group
	mkdir -p $O/sys/fs/cgroup/$1
	for f in /sys/fs/cgroup/$1/memory.* /sys/fs/cgroup/$1/cgroup.procs; do cat $f > $O/sys/fs/cgroup/$1/$(basename $f) 2>/dev/null; done
}
procsnap() { # pid
	mkdir -p $O/proc/$1
	for f in status smaps_rollup cgroup stat cmdline comm; do cat /proc/$1/$f > $O/proc/$1/$f; done
}
# page cache fills a 32 MiB group
mkdir /sys/fs/cgroup/memdiag-cache; echo $((32<<20)) > /sys/fs/cgroup/memdiag-cache/memory.max
sh -c 'echo $$ > /sys/fs/cgroup/memdiag-cache/cgroup.procs; exec /tmp/uml/hog -file /run/disk/data -read-passes 50' & CP=$!
sleep 4; snap memdiag-cache; procsnap $CP; kill $CP; wait $CP
# anon beyond memory.high and memory.max, pushed to swap
mkdir /sys/fs/cgroup/memdiag-anon; echo $((24<<20)) > /sys/fs/cgroup/memdiag-anon/memory.max; echo $((20<<20)) > /sys/fs/cgroup/memdiag-anon/memory.high
sh -c 'echo $$ > /sys/fs/cgroup/memdiag-anon/cgroup.procs; exec /tmp/uml/hog -anon 41943040 -hold 30s' & AP=$!
sleep 6; snap memdiag-anon; procsnap $AP; kill $AP; wait $AP
# OOM kill at memory.max with no swap for the group
mkdir /sys/fs/cgroup/memdiag-oom; echo $((32<<20)) > /sys/fs/cgroup/memdiag-oom/memory.max; echo 0 > /sys/fs/cgroup/memdiag-oom/memory.swap.max
sh -c 'echo $$ > /sys/fs/cgroup/memdiag-oom/cgroup.procs; exec tail /dev/zero'
echo "memcg hog exit $?" > $O/hog-exit.txt
snap memdiag-oom
mkdir -p $O/proc
cp /proc/vmstat /proc/meminfo /proc/stat $O/proc/; mkdir -p $O/proc/self; cat /proc/self/mountinfo > $O/proc/self/mountinfo; for m in $(awk '$9=="tmpfs"{print $5}' /proc/self/mountinfo); do stat -f -c "$m blocks=%b free=%f bsize=%S" $m; done > $O/statfs.txt
cat /proc/pressure/memory > $O/proc/pressure-memory 2>&1
swapoff /dev/ubdb
tail /dev/zero
echo "global hog exit $?" >> $O/hog-exit.txt
cp /proc/vmstat $O/proc/vmstat.after-global
dmesg > $O/dmesg.txt
dd if=/dev/kmsg of=$O/kmsg.txt iflag=nonblock bs=8192 2>/dev/null
umount /run/disk; sync
halt -f
