#!/bin/sh
# init for a UML 6.1 capture: argument mode= (from the kernel command line)
export PATH=/usr/sbin:/usr/bin:/sbin:/bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t tmpfs tmpfs /run
mkdir -p /run/out && mount -t hostfs none /run/out -o /tmp/uml/out
O=/run/out/$mode
mkdir -p $O
uname -a > $O/uname.txt
cat /proc/cmdline > $O/cmdline.txt
case $mode in
v1)
	mkdir -p /run/cg && mount -t cgroup -o memory memory /run/cg
	mkdir /run/cg/memdiag-oom
	echo $((32*1024*1024)) > /run/cg/memdiag-oom/memory.limit_in_bytes
	sh -c 'echo $$ > /run/cg/memdiag-oom/tasks; exec tail /dev/zero'
	echo "memcg hog exit $?" > $O/hog-exit.txt
	;;
v2)
	mkdir -p /run/cg2 && mount -t cgroup2 none /run/cg2
	cat /run/cg2/cgroup.controllers > $O/root-cgroup.controllers
	echo +memory > /run/cg2/cgroup.subtree_control
	# a group filled with page cache: 32 MiB max, reads a 128 MiB file twice
	mkdir /run/cg2/memdiag-cache
	echo $((32*1024*1024)) > /run/cg2/memdiag-cache/memory.max
	echo $((28*1024*1024)) > /run/cg2/memdiag-cache/memory.high
	sh -c 'echo $$ > /run/cg2/memdiag-cache/cgroup.procs; cat /var/tmp/memdiag-uml-cache.dat > /dev/null; exec cat /var/tmp/memdiag-uml-cache.dat > /dev/null'
	mkdir -p $O/memdiag-cache
	for f in /run/cg2/memdiag-cache/memory.*; do cat $f > $O/memdiag-cache/$(basename $f) 2>/dev/null; done
	# a group OOM-killed at its limit
	mkdir /run/cg2/memdiag-oom
	echo $((32*1024*1024)) > /run/cg2/memdiag-oom/memory.max
	sh -c 'echo $$ > /run/cg2/memdiag-oom/cgroup.procs; exec tail /dev/zero'
	echo "memcg hog exit $?" > $O/hog-exit.txt
	mkdir -p $O/memdiag-oom
	for f in /run/cg2/memdiag-oom/memory.*; do cat $f > $O/memdiag-oom/$(basename $f) 2>/dev/null; done
	# a global OOM: the whole (mem=) machine runs out
	tail /dev/zero
	echo "global hog exit $?" >> $O/hog-exit.txt
	;;
esac
cp /proc/vmstat /proc/meminfo /proc/stat $O/
cat /proc/pressure/memory > $O/pressure-memory 2>&1
dmesg > $O/dmesg.txt
dd if=/dev/kmsg of=$O/kmsg.txt iflag=nonblock bs=8192 2>/dev/null
sync
halt -f
