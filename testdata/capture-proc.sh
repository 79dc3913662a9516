#!/bin/sh
# capture-proc.sh DEST — copy the /proc files memdiag's collectors read into
# DEST/proc, as a fixture root. The time (CLOCK_REALTIME, ns since the
# epoch) is written to DEST/TIME just before /proc/pressure is read, so a
# test can compute stall shares between two captures.
#
# Used to make testdata/linux-6.18*; see each case's SOURCE.
set -eu
dest=$1
mkdir -p "$dest/proc/pressure"
date +%s%N >"$dest/TIME"
for r in memory io cpu; do
	cat /proc/pressure/$r >"$dest/proc/pressure/$r"
done
for f in meminfo vmstat swaps diskstats; do
	cat /proc/$f >"$dest/proc/$f"
done
