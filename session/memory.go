package session

import (
	"context"
	"path/filepath"

	"github.com/memdiag/memdiag/lru"
	"github.com/memdiag/memdiag/record"
	"github.com/memdiag/memdiag/sources"
	"github.com/memdiag/memdiag/swap"
	"github.com/memdiag/memdiag/timers"
)

// addMemorySources wires /proc/meminfo and /proc/vmstat (LRU), /proc/swaps and the
// periodic-job inventory into the recording header.
func addMemorySources(ctx context.Context, o *Options, h *record.Header, ws *Sources) {
	procRoot := filepath.Join(o.Root, "proc")
	lc, err := lru.NewCollector(procRoot)
	if err == nil {
		_, err = lc.Meminfo()
	}
	ws.status(h, "meminfo", err)
	if err == nil {
		m, verr := lc.VMStatMapping()
		ws.status(h, "vmstat", verr)
		h.VMStatMapping = m
		ws.List = append(ws.List, sources.LRU{C: lc},
			&sources.OOMKills{Root: o.Root, Boot: h.BootTime})
	}
	sw, err := swap.Swaps(procRoot)
	ws.status(h, "swaps", err)
	h.Swaps = record.FromSwaps(sw)

	// The host's periodic jobs at start, so that analyze can project
	// their firings over the recording later, on any host.
	if !o.NoTimers {
		jobs, err := HostJobs(o.Root, o.KeepCmdline)
		ws.status(h, "timers", err)
		h.Jobs = record.FromJobs(jobs)
	}
}

// HostJobs is the periodic-job inventory of the host under root now,
// with what fires now (for gate --recording); `memdiag record` takes it
// again for each segment's header, so jobs installed meanwhile are in
// the next one. keepSecrets stores job commands unredacted.
func HostJobs(root string, keepSecrets bool) ([]timers.Job, error) {
	jobs, err := timers.Inventory(root, timers.InventoryOptions{KeepSecrets: keepSecrets})
	// systemd's live state: a timer started by hand fires though its
	// files say nothing pulls it in, one stopped does not. Why it cannot
	// be read, `memdiag timers` says; runs_now and live_note record what
	// fires.
	_ = timers.ApplyLiveFrom(context.Background(), root, jobs, timers.ProbeLiveSource)
	if running, ok := timers.ProbeRunning(root); ok {
		timers.ApplyRunning(jobs, running)
	}
	return jobs, err
}
