package memview

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/memdiag/memdiag/psi"
)

// ErrParse is wrapped by every parse error of this package.
var ErrParse = errors.New("malformed line")

// VMStat is /proc/vmstat as counter name → value, every counter cumulative
// since boot (pages or events; see include/linux/vm_event_item.h and
// mm/vmstat.c). memview needs only a few counters and sums the per-zone
// variants itself (see [Activity]).
//
// TODO(lead): the lru package maps vmstat names across kernels into
// lru.VMStat; once merged, Snapshot can carry that instead.
type VMStat map[string]uint64

// parseVMStat reads "name value" lines; path is for error messages.
func parseVMStat(r io.Reader, path string) (VMStat, error) {
	v := VMStat{}
	sc := bufio.NewScanner(r)
	n := 0
	for sc.Scan() {
		n++
		line := sc.Text()
		if strings.TrimSpace(line) == "" {
			continue
		}
		name, val, ok := strings.Cut(line, " ")
		x, err := strconv.ParseUint(strings.TrimSpace(val), 10, 64)
		if !ok || err != nil {
			return nil, fmt.Errorf("%s:%d: %w: %q", path, n, ErrParse, line)
		}
		v[name] = x
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return v, nil
}

// sumPrefix adds every counter whose name is one of names or starts with
// one of them followed by "_" (per-zone variants such as allocstall_normal,
// pgscan_direct_normal before 4.8). pgscan_direct_throttle, which counts
// throttling events and not pages, is not a variant. ok is false if no such
// counter exists.
func (v VMStat) sumPrefix(names ...string) (total uint64, ok bool) {
	for k, x := range v {
		if k == "pgscan_direct_throttle" {
			continue
		}
		for _, n := range names {
			if k == n || strings.HasPrefix(k, n+"_") {
				total += x
				ok = true
				break
			}
		}
	}
	return total, ok
}

// Snapshot is one read of the pressure side of memory: /proc/vmstat and
// /proc/pressure/memory at Time. [Assess] compares two of them.
type Snapshot struct {
	Time   time.Time     `json:"time"`
	VMStat VMStat        `json:"-"`
	PSI    *psi.Resource `json:"psi,omitempty"` // nil without PSI (kernel < 4.20, psi=0)
}

// Snapshot reads /proc/vmstat and /proc/pressure/memory once, stamping it
// with now. Missing PSI is not an error: PSI stays nil and the
// *psi.UnavailableError is returned in missing.
func (c *Collector) Snapshot(now time.Time) (s Snapshot, missing error, err error) {
	p := filepath.Join(c.root, "proc/vmstat")
	f, err := os.Open(p)
	if err != nil {
		return Snapshot{}, nil, err
	}
	defer f.Close()
	s.Time = now
	if s.VMStat, err = parseVMStat(f, p); err != nil {
		return Snapshot{}, nil, err
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
	// DirectScanPages are pages scanned by allocating tasks themselves
	// (pgscan_direct, summed over its per-zone variants on old kernels);
	// Allocstalls counts entries into direct reclaim (allocstall_*).
	DirectScanPages uint64 `json:"direct_scan_pages"`
	Allocstalls     uint64 `json:"allocstalls"`
	// KswapdScanPages are pages scanned by the background reclaimer.
	KswapdScanPages uint64 `json:"kswapd_scan_pages"`
	MajorFaults     uint64 `json:"major_faults"` // pgmajfault
	SwapOutPages    uint64 `json:"swap_out_pages"`
	OOMKills        uint64 `json:"oom_kills"` // oom_kill (since 4.13)
}

// NewActivity computes the Activity between prev and cur. A counter that
// went backwards (a different boot) counts as zero.
func NewActivity(prev, cur Snapshot) Activity {
	a := Activity{Interval: cur.Time.Sub(prev.Time)}
	d := func(names ...string) uint64 {
		x, _ := prev.VMStat.sumPrefix(names...)
		y, _ := cur.VMStat.sumPrefix(names...)
		return sub(y, x)
	}
	// workingset_refault_file/anon (5.9+) start with "workingset_refault_",
	// so the prefix sum covers both kernels' names.
	a.RefaultPages = d("workingset_refault")
	a.DirectScanPages = d("pgscan_direct")
	a.Allocstalls = d("allocstall")
	a.KswapdScanPages = d("pgscan_kswapd")
	a.MajorFaults = d("pgmajfault")
	a.SwapOutPages = d("pswpout")
	a.OOMKills = d("oom_kill")
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
