// Package memstate answers "which memory is the problem?" from the kernel's
// own accounting, for the host, each memory cgroup and each process, and
// lists the OOM kills that usually started the question.
//
// It reads, from a root directory (a fixture tree in tests, "/" live):
//
//   - /proc/meminfo (host totals, LRU lists, slab, swap; via procfs) and the
//     tmpfs mounts of /proc/self/mountinfo with their statfs(2) use;
//   - /proc/vmstat and /proc/pressure/memory, twice, so the [Verdict] can say
//     whether the kernel is under pressure (PSI stall share, refaults,
//     direct reclaim) over the seconds between the reads;
//   - /proc/PID/status (RssAnon, RssFile, RssShmem), /proc/PID/smaps_rollup
//     (Rss and Pss, one read, Swap) and /proc/PID/cgroup for the processes with the largest RSS;
//   - the memory cgroups under /sys/fs/cgroup: v2 memory.{current,max,high,
//     swap.current,stat,events,pressure} and v1 memory.{usage_in_bytes,
//     limit_in_bytes,stat,failcnt,oom_control};
//   - OOM kills from the kernel log ([Collector.ReadKernelLog]: /dev/kmsg,
//     else on the running host the output of dmesg or journalctl -k, or a
//     file of log text; any of them parsed by [ParseKernelLogWith]).
//
// Every figure is in bytes; the kernel's kB in /proc is KiB.
//
// Sources: https://docs.kernel.org/filesystems/proc.html (meminfo, status,
// smaps_rollup), https://docs.kernel.org/admin-guide/cgroup-v2.html
// ("Memory"), https://docs.kernel.org/admin-guide/cgroup-v1/memory.html,
// https://docs.kernel.org/accounting/psi.html,
// https://docs.kernel.org/admin-guide/abi-testing.html (/dev/kmsg), and
// mm/oom_kill.c for the OOM kill messages.
package memstate
