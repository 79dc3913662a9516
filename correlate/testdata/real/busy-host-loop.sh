#!/bin/bash
# A new user's trial on a busy host: a 10 s loop doing I/O in a
# memory-limited v1 cgroup, while a CPU load runs; memdiag watch as root.
set -u
OUT=${1:-/tmp/verdict-trial.jsonl}
CG=/sys/fs/cgroup/memory/memdiag-verdict-trial
D=/var/tmp/memdiag-verdict-trial
mkdir -p $CG $D
echo $((160<<20)) > $CG/memory.limit_in_bytes
pids=()
# CPU load outside the cgroup: 3 busy loops (2 cores).
for i in 1 2 3; do sh -c 'while :; do :; done' & pids+=($!); done
# anon holder in the cgroup (100 MiB)
sh -c "echo \$\$ > $CG/cgroup.procs; exec python3 -c 'import time; b=bytearray(100<<20); [b.__setitem__(i,1) for i in range(0,len(b),4096)]; time.sleep(600)'" & pids+=($!)
cat > $D/job.sh <<'J'
#!/bin/sh
dd if=/dev/zero of=/var/tmp/memdiag-verdict-trial/job.dat bs=1M count=200 conv=fsync status=none
cat /var/tmp/memdiag-verdict-trial/job.dat > /dev/null
J
chmod +x $D/job.sh
sleep 2
/tmp/verdict-memdiag watch --interval 1s --duration ${DUR:-80s} --out $OUT --quiet --keep-cmdline & w=$!
sleep 3
sh -c "echo \$\$ > $CG/cgroup.procs; while :; do $D/job.sh & sleep 10; wait; done" & pids+=($!)
wait $w
for p in "${pids[@]}"; do pkill -P $p 2>/dev/null; kill $p 2>/dev/null; done
sleep 1
for p in $(cat $CG/cgroup.procs); do kill $p; done
sleep 1
rmdir $CG
rm -rf $D
