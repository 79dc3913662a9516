package helptext

// Flag help shared by several commands (the cobra wiring is cmd's).

// VictimFlag is the help of --victim, the same in watch, record and gate.
const VictimFlag = "whose latency is measured: `PID`, UNIT (web.service) or CGROUP (its own stall and memory are recorded; default: the service behind a local --probe)"

// VictimRecordFlag is record's --victim: it has no --probe, so no default.
const VictimRecordFlag = "whose latency is measured: `PID`, UNIT (web.service) or CGROUP (its own stall and memory are recorded; default: none)"

// EBPFFlag is the --ebpf help of watch and record.
const EBPFFlag = "trace the page-cache chain with eBPF: auto, on or off. Records per sample who added pages to the page cache, whose file pages reclaim evicted and by whom (kswapd, direct, cgroup limit), who stalled in reclaim and for how long, and who refaulted (docs/recording.md, \"chain\"). Costs a few hundred ns of kernel time per page added or evicted, summed in kernel maps read once per sample; needs root (CAP_BPF, CAP_PERFMON) and kernel BTF. auto: skip with a note when it cannot load; on: exit 5 instead"

// CgroupValue is what a --cgroup value may be, for every command
// (cgroupfs.Resolve gives it its one meaning).
const CgroupValue = "its `DIR` (on a hybrid host under /sys/fs/cgroup/unified/; read under --root) or its path below the cgroup2 mount (system.slice/web.service)"

// CgroupRecordFlag is watch's and record's --cgroup help.
const CgroupRecordFlag = "also record this cgroup v2 group's memory, io and cpu pressure and its memory counters: " + CgroupValue + "; default: the victim's group, when one is found"
