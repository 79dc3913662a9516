package process

// RSS is one process's resident memory at one sample, kept small for
// recordings (`memdiag watch` stores the top processes by RSS and every
// process whose RSS is growing, each interval; memstate.GrowthSeries fits
// them). Source: /proc/PID/status RssAnon, RssFile, RssShmem (kB,
// converted to bytes); https://docs.kernel.org/filesystems/proc.html
// ("/proc/<pid>/status").
type RSS struct {
	PID int `json:"pid"`
	// StartTicks is the start time in clock ticks after boot; with PID it
	// tells a process from a later one that reuses its PID.
	StartTicks uint64 `json:"start_ticks"`
	Comm       string `json:"comm"`
	AnonBytes  uint64 `json:"anon_bytes"`  // RssAnon
	FileBytes  uint64 `json:"file_bytes"`  // RssFile
	ShmemBytes uint64 `json:"shmem_bytes"` // RssShmem
	// Cgroup is its cgroup path (/proc/PID/cgroup, as process.Event's),
	// "" when unreadable; added after schema 1 was frozen.
	Cgroup string `json:"cgroup,omitempty"`
	// Threads is its thread count (/proc/PID/status Threads), 0 when not
	// read; added after schema 1 was frozen. Recorded each sample, so a
	// process that starts threads after it began to grow is seen with
	// them (glibc malloc gives threads arenas of their own).
	Threads int `json:"threads,omitempty"`
}
