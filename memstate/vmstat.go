package memstate

import (
	"context"
	"errors"
	"math"
	"path/filepath"
	"strings"
	"time"

	"github.com/memdiag/memdiag/internal/rootfs"
	"github.com/memdiag/memdiag/lru"
	"github.com/memdiag/memdiag/psi"
	"github.com/memdiag/memdiag/signal"
)

// ErrParse is wrapped by every parse error of this package.
var ErrParse = lru.ErrKV // "malformed line", the same as lru's "name value" files

// Snapshot is one read of the pressure side of memory: /proc/vmstat and
// /proc/pressure/memory at Time. [Build] compares two of them.
type Snapshot struct {
	Time   time.Time     `json:"time"`
	VMStat *lru.VMStat   `json:"-"`             // /proc/vmstat, mapped across kernel versions by package lru
	PSI    *psi.Resource `json:"psi,omitempty"` // nil without PSI (kernel < 4.20, psi=0)
	Kernel string        `json:"-"`             // /proc/sys/kernel/osrelease, "" if unreadable
}

// reading is the snapshot as the signal catalogue reads it.
func (s Snapshot) reading() *signal.Reading {
	r := &signal.Reading{VMStat: s.VMStat}
	if s.PSI != nil {
		r.PSI = &psi.Snapshot{Memory: s.PSI}
	}
	return r
}

// Snapshot reads /proc/vmstat and /proc/pressure/memory once, stamping it
// with now. Missing PSI is not an error: PSI stays nil and the
// *psi.UnavailableError is returned in missing.
func (c *Collector) Snapshot(now time.Time) (s Snapshot, missing error, err error) {
	p := filepath.Join(c.root, "proc/vmstat")
	f, err := rootfs.OpenPath(p)
	if err != nil {
		return Snapshot{}, nil, err
	}
	defer f.Close()
	s.Time = now
	if s.VMStat, err = lru.ParseVMStat(f, p); err != nil {
		return Snapshot{}, nil, err
	}
	// Best effort, through the jail: the kernel names a suspect-PSI warning.
	if b, err := rootfs.ReadFile(context.Background(), c.root, "proc/sys/kernel/osrelease", 256); err == nil {
		s.Kernel = strings.TrimSpace(string(b))
	}
	r, err := psi.ReadFile(filepath.Join(c.root, "proc/pressure/memory"))
	if err != nil {
		var ue *psi.UnavailableError
		if errors.As(err, &ue) {
			return s, err, nil
		}
		return Snapshot{}, nil, err
	}
	s.PSI = &r
	return s, nil, nil
}

// Activity is what the kernel did to memory between two snapshots: the
// deltas of the /proc/vmstat counters that mean pressure, and the PSI stall
// share from the delta of the memory "some"/"full" totals.
type Activity struct {
	Interval time.Duration `json:"interval_ns"`

	// PSI memory stall share of wall time over the interval (0..1); nil
	// without PSI.
	StallSome *float64 `json:"stall_some,omitempty"`
	StallFull *float64 `json:"stall_full,omitempty"`

	// Refaults are pages read back in soon after being evicted
	// (workingset_refault_file + workingset_refault_anon since 5.9,
	// workingset_refault before): the cache is too small for the working set.
	RefaultPages uint64 `json:"refault_pages"`
	// DirectScanPages are pages scanned by allocating tasks because the
	// host ran short: pgscan_direct (summed over per-zone variants on old
	// kernels). Allocstalls counts entries into it (allocstall_*).
	DirectScanPages uint64 `json:"direct_scan_pages"`
	Allocstalls     uint64 `json:"allocstalls"`
	// LimitScanPages are pages scanned because cgroups reached their
	// limits (memory.max, memory.high, v1 limit_in_bytes): pgscan_anon +
	// pgscan_file − pgscan_kswapd − pgscan_direct (5.8+; mm/vmscan.c counts
	// cgroup reclaim in pgscan_anon/_file but not in pgscan_direct;
	// khugepaged's and proactive reclaim, rare, land here too). 0 before 5.8.
	LimitScanPages uint64 `json:"limit_scan_pages"`
	// KswapdScanPages are pages scanned by the background reclaimer.
	KswapdScanPages uint64 `json:"kswapd_scan_pages"`
	MajorFaults     uint64 `json:"major_faults"` // pgmajfault
	SwapOutPages    uint64 `json:"swap_out_pages"`
	OOMKills        uint64 `json:"oom_kills"` // oom_kill (since 4.13)

	// Signals is every catalogue signal's rate over the interval, keyed
	// and in the unit as analyze's episodes and gate's results give it:
	// the key is signal.Signal.RateKey ("swap_out_pages_per_s"), the value
	// Σchange per second in its RateUnit (a stall share 0..1). A signal
	// the kernel does not count is absent, not zero; with no interval
	// (one read) there is none.
	Signals map[string]float64 `json:"signals,omitempty"`
}

// NewActivity computes the Activity between prev and cur. A counter that
// went backwards (a different boot) counts as zero.
func NewActivity(prev, cur Snapshot) Activity {
	a := Activity{Interval: cur.Time.Sub(prev.Time)}
	if prev.VMStat == nil || cur.VMStat == nil {
		return a
	}
	// Every count is a catalogue signal's delta (package signal), the
	// same definition analyze and gate use; an unknown one is 0 here.
	rp, rc := prev.reading(), cur.reading()
	d := func(sig *signal.Signal) uint64 {
		x, ok := sig.Between(rp, rc)
		if !ok {
			return 0
		}
		return uint64(x)
	}
	a.Signals = make(map[string]float64, len(signal.Catalogue))
	for _, sig := range signal.Catalogue {
		if r := sig.PerSec(rp, rc, a.Interval); !math.IsNaN(r) {
			a.Signals[sig.RateKey()] = r
		}
	}
	a.RefaultPages = d(signal.RefaultFile) + d(signal.RefaultAnon)
	a.DirectScanPages = d(signal.DirectReclaim)
	a.KswapdScanPages = d(signal.KswapdReclaim)
	a.LimitScanPages = d(signal.LimitReclaim)
	a.Allocstalls = d(signal.Allocstalls)
	a.MajorFaults = d(signal.MajorFaults)
	a.SwapOutPages = d(signal.SwapOut)
	a.OOMKills = d(signal.OOMKills)
	if prev.PSI != nil && cur.PSI != nil {
		if s, ok := psi.StallShare(prev.PSI.Some, cur.PSI.Some, a.Interval); ok {
			a.StallSome = &s
		}
		if prev.PSI.Full != nil && cur.PSI.Full != nil {
			if s, ok := psi.StallShare(*prev.PSI.Full, *cur.PSI.Full, a.Interval); ok {
				a.StallFull = &s
			}
		}
	}
	return a
}

// Snapshots reads the pressure side twice, interval apart, so that [Build]
// can measure pressure over it: prev now and cur after interval, each
// stamped by now(); with interval 0, one read (cur == prev, pressure not
// measured). missing is what the first read lacked ([Collector.Snapshot]).
// between, when set, runs between the reads (a test changes a fixture's
// counters there). A ctx done while waiting ends it with ctx's error.
func (c *Collector) Snapshots(ctx context.Context, interval time.Duration, now func() time.Time, between func()) (prev, cur Snapshot, missing, err error) {
	prev, missing, err = c.Snapshot(now())
	if err != nil {
		return prev, cur, missing, err
	}
	cur = prev
	if interval <= 0 {
		return prev, cur, missing, nil
	}
	select {
	case <-ctx.Done():
		return prev, cur, missing, ctx.Err()
	case <-time.After(interval):
	}
	if between != nil {
		between()
	}
	if cur, _, err = c.Snapshot(now()); err != nil {
		return prev, cur, missing, err
	}
	return prev, cur, missing, nil
}
