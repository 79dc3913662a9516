package signal_test

import (
	"math"
	"os"
	"testing"
	"time"

	"github.com/memdiag/memdiag/gate"
	"github.com/memdiag/memdiag/internal/testutil/hogsample"
	"github.com/memdiag/memdiag/lru"
	"github.com/memdiag/memdiag/memstate"
	"github.com/memdiag/memdiag/record"
	"github.com/memdiag/memdiag/signal"
)

// readVMStat parses a real /proc/vmstat from the shared fixture trees.
func readVMStat(t *testing.T, path string) *lru.VMStat {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	v, err := lru.ParseVMStat(f, path)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// hog is two real samples of a 6.18 host while a memory hog ran in a
// 64 MiB cgroup v1 group and was OOM-killed (testdata/linux-6.18-hog-t0
// and -t1; see their SOURCE): t1 − t0 = 1151581560 ns.
func hog(t *testing.T) (prev, cur *lru.VMStat, dt time.Duration) {
	return readVMStat(t, "../testdata/linux-6.18-hog-t0/proc/vmstat"),
		readVMStat(t, "../testdata/linux-6.18-hog-t1/proc/vmstat"),
		1151581560 * time.Nanosecond
}

// hogReading is every file of one hog sample the catalogue reads.
func hogReading(t *testing.T, which string) *signal.Reading {
	t.Helper()
	h := hogsample.Read(t, which)
	return &signal.Reading{VMStat: h.VMStat, Meminfo: h.Meminfo, PSI: &h.PSI, Disks: h.Disks, PageSize: 4096}
}

// hogWant is every catalogue signal's delta between hog-t0 and hog-t1,
// read off the two vmstat files by hand (grep '^pgscan' … of each).
// Adding a signal to the catalogue means adding its row here.
var hogWant = map[string]float64{
	// pgscan_direct 0 → 0: the host never ran short; the group did.
	"direct_reclaim": 0,
	// pgscan_anon 71952 → 182548, pgscan_file 537355 → 537355,
	// pgscan_kswapd 0 → 0, pgscan_direct 0 → 0: all of it at the limit.
	"limit_reclaim":  182548 - 71952,
	"alloc_reclaim":  182548 - 71952,
	"kswapd_reclaim": 0,
	// pgsteal_anon 25714 → 67092, pgsteal_file 382951 → 382951
	// (pgsteal_kswapd and _direct 0 → 0: limit reclaim is not in them).
	"reclaimed": 67092 - 25714,
	// workingset_refault_file 277394 → 277398; _anon 1601 → 1601.
	"refault_file": 4,
	"refault_anon": 0,
	// workingset_activate_file 23732 → 23732, _anon 0 → 0.
	"workingset_activate": 0,
	// workingset_restore_file 0 → 0, _anon 0 → 0.
	"workingset_restore": 0,
	// pgmajfault 1466 → 1467; allocstall_* all 0.
	"major_faults": 1,
	"allocstalls":  0,
	// pswpin 68 → 68, pswpout 12154 → 32945; oom_kill 0 → 1.
	"swap_in":   0,
	"swap_out":  32945 - 12154,
	"oom_kills": 1,

	// proc/pressure/{memory,io,cpu} total=, µs → s: memory some
	// 411329 → 641648, full 223741 → 408339; io some 4045824 → 4046578,
	// full 3057719 → 3058048; cpu some 33323895 → 34027764, full 0 → 0.
	"psi_memory_some": 0.230319,
	"psi_memory_full": 0.184598,
	"psi_io_some":     0.000754,
	"psi_io_full":     0.000329,
	"psi_cpu_some":    0.703869,
	"psi_cpu_full":    0,

	// proc/meminfo, kB × 1024, the change t0 → t1: Active(file)
	// 453092 → 458836, Inactive(file) 902256 → 906472, Active(anon)
	// 1572 → 1568, Inactive(anon) 165956 → 85120, MemAvailable
	// 24068316 → 24163456, Dirty 2148 → 12316, SwapFree 165768 → 262140
	// of SwapTotal 262140 (the OOM kill freed the swap).
	"file_lru":      (5744 + 4216) * 1024,
	"anon_lru":      (-4 - 80836) * 1024,
	"active_file":   5744 * 1024,
	"inactive_file": 4216 * 1024,
	"active_anon":   -4 * 1024,
	"inactive_anon": -80836 * 1024,
	"mem_available": 95140 * 1024,
	"dirty":         10168 * 1024,
	"swap_used":     -96372 * 1024,

	// proc/diskstats, vda (every other device is all zeros): reads
	// 43474 → 43476, sectors read 3623010 → 3623026, writes 24221 → 44743,
	// sectors written 3534680 → 3700096, weighted ms 56475 → 64904.
	"disk_read":    16 * 512,
	"disk_written": 165416 * 512,
	"disk_ios":     2 + 20522,
	"disk_io_time": 8.429,
}

// near is equality up to float rounding (µs and ms converted to s).
func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*max(1, math.Abs(b)) }

func TestCatalogueOnRealSamples(t *testing.T) {
	prev, cur := hogReading(t, "t0"), hogReading(t, "t1")
	for _, sig := range signal.Catalogue {
		want, ok := hogWant[sig.Name]
		if !ok {
			t.Errorf("%s: no hand-checked value in hogWant", sig.Name)
			continue
		}
		got, ok := sig.Between(prev, cur)
		if !ok || !near(got, want) {
			t.Errorf("%s: Between = %v, %v; want %v, true", sig.Name, got, ok, want)
		}
		// A /proc/vmstat signal reads nothing else.
		if sig.Source == "/proc/vmstat" {
			if got, ok := sig.Delta(prev.VMStat, cur.VMStat); !ok || got != want {
				t.Errorf("%s: Delta = %v, %v; want %v, true", sig.Name, got, ok, want)
			}
		}
	}
	if len(hogWant) != len(signal.Catalogue) {
		t.Errorf("hogWant has %d rows, the catalogue %d entries", len(hogWant), len(signal.Catalogue))
	}
}

// TestCatalogueOldKernel: 4.13 has no pgscan_anon/_file, no anon refaults,
// no workingset_restore and counts allocstall per zone; what it cannot count is unknown, never 0.
func TestCatalogueOldKernel(t *testing.T) {
	v := readVMStat(t, "../testdata/ubuntu-17.10-linux-4.13/proc/vmstat")
	for _, sig := range signal.Catalogue {
		if sig.Source != "/proc/vmstat" {
			continue
		}
		_, ok := sig.Delta(v, v)
		// workingset_restore came in 4.20.
		wantOK := sig != signal.LimitReclaim && sig != signal.RefaultAnon && sig != signal.WorkingsetRestore
		if ok != wantOK {
			t.Errorf("%s on 4.13: known = %v, want %v", sig.Name, ok, wantOK)
		}
	}
	// Before 5.8 the kernel cannot tell limit reclaim apart: alloc
	// reclaim is direct reclaim.
	p, c := *v, *v
	d := *v.PgscanDirect + 500
	c.PgscanDirect = &d
	if got, ok := signal.AllocReclaim.Delta(&p, &c); !ok || got != 500 {
		t.Errorf("alloc_reclaim on 4.13 = %v, %v; want 500, true", got, ok)
	}
}

func TestCatalogueCounterReset(t *testing.T) {
	prev, cur := hogReading(t, "t0"), hogReading(t, "t1")
	for _, sig := range signal.Catalogue {
		if sig.Kind != signal.Counter {
			continue
		}
		// Unknown, or for a sum over devices the reset device left out
		// (vda is the only one that moved): never a negative or huge value.
		if got, ok := sig.Between(cur, prev); ok && got != 0 && hogWant[sig.Name] != 0 {
			t.Errorf("%s: a counter that went backwards gave a value", sig.Name)
		}
	}
}

func TestCatalogueEntriesComplete(t *testing.T) {
	names, gates := map[string]bool{}, map[string]bool{}
	for _, sig := range signal.Catalogue {
		if sig.Name == "" || sig.Title == "" || sig.Unit == "" || sig.Computed == "" || sig.Doc == "" ||
			sig.Kernel == "" || sig.URL == "" || sig.Source == "" || len(sig.Counters) == 0 {
			t.Errorf("%+v: every field must be set", sig)
		}
		if names[sig.Name] || (sig.Gate != "" && gates[sig.Gate]) {
			t.Errorf("%s: name or gate name used twice", sig.Name)
		}
		names[sig.Name], gates[sig.Gate] = true, true
		if signal.Lookup(sig.Name) != sig {
			t.Errorf("Lookup(%q) is not the entry", sig.Name)
		}
	}
}

// TestSameSignalEverywhere is the catalogue's promise: for every entry,
// the same two samples give the same name, value and unit in analyze
// (record.Interval), gate (its metric over the run) and mem
// (memstate.Activity).
func TestSameSignalEverywhere(t *testing.T) {
	_, _, dt := hog(t)
	prev, cur := hogReading(t, "t0"), hogReading(t, "t1")
	t0 := time.Date(2026, 11, 29, 21, 42, 0, 0, time.UTC)
	h := &record.Header{PageSize: 4096}
	samples := []record.Sample{
		{Time: t0, VMStat: record.FromVMStat(prev.VMStat), Meminfo: record.FromMeminfo(prev.Meminfo), PSI: record.FromPSI(prev.PSI), Disks: record.FromDisks(prev.Disks)},
		{Seq: 1, Time: t0.Add(dt), VMStat: record.FromVMStat(cur.VMStat), Meminfo: record.FromMeminfo(cur.Meminfo), PSI: record.FromPSI(cur.PSI), Disks: record.FromDisks(cur.Disks)},
	}

	iv := record.Between(h, &samples[0], &samples[1])
	// mem reads /proc/vmstat and /proc/pressure/memory only.
	act := memstate.NewActivity(memstate.Snapshot{Time: t0, VMStat: prev.VMStat, PSI: prev.PSI.Memory},
		memstate.Snapshot{Time: t0.Add(dt), VMStat: cur.VMStat, PSI: cur.PSI.Memory})
	memReads := func(sig *signal.Signal) bool {
		return sig.Source == "/proc/vmstat" || sig.Source == "/proc/pressure/memory"
	}

	for _, sig := range signal.Catalogue {
		t.Run(sig.Name, func(t *testing.T) {
			want := hogWant[sig.Name]
			wantRate := want / dt.Seconds()

			// analyze
			if got := iv.PerSec(sig); !near(got, wantRate) {
				t.Errorf("analyze: %s = %v %s, want %v", sig.Name, got, sig.RateUnit(), wantRate)
			}
			// mem: the same key and rate as analyze, for every signal of
			// the files it reads; nothing else.
			if got, ok := act.Signals[sig.RateKey()]; ok != memReads(sig) || (ok && !near(got, wantRate)) {
				t.Errorf("mem: Signals[%q] = %v, %v; want %v, %v", sig.RateKey(), got, ok, wantRate, memReads(sig))
			}
			// gate: its metric is this entry, judged over the run.
			if sig.Gate == "" {
				return
			}
			m := gate.LookupMetric(sig.Gate)
			if m == nil || m.Signal != sig {
				t.Fatalf("gate: metric %q is not catalogue entry %s", sig.Gate, sig.Name)
			}
			var expr string
			var wantObs float64
			switch {
			case sig.PSI != nil:
				expr, wantObs = sig.Gate+"<100%", wantRate*100 // a stall share, in percent
			case sig.Aggregate == signal.Rate:
				expr, wantObs = sig.Gate+"<1000000/s", wantRate // "/s": the signal's unit per second
			case sig.Aggregate == signal.Total:
				expr, wantObs = sig.Gate+"<1000000", want
				if sig.Unit == signal.Pages {
					expr, wantObs = sig.Gate+"<1GiB", want*4096
				}
			}
			th, err := gate.Parse(expr)
			if err != nil {
				t.Fatal(err)
			}
			rep := gate.Evaluate(h, samples, gate.Scope{}, []*gate.Threshold{th})
			if got := rep.Results[0].Observed; !near(got, wantObs) {
				t.Errorf("gate: %s = %v, want %v", expr, got, wantObs)
			}
			// and the catalogue's rate, as analyze and mem give it.
			if got := rep.Results[0].SignalRate; !near(got, wantRate) {
				t.Errorf("gate: %s signal rate = %v %s, want %v", expr, got, sig.RateUnit(), wantRate)
			}
			// Units: a page signal's rate converts to bytes/s, an event's does not.
			_, err = gate.Parse(sig.Gate + "<1MiB/s")
			if wantBytes := sig.Unit == signal.Pages && sig.Aggregate == signal.Rate; (err == nil) != wantBytes {
				t.Errorf("gate: %s in MiB/s accepted = %v, want %v (%s)", sig.Gate, err == nil, wantBytes, sig.Unit)
			}
		})
	}
	if got := signal.DirectReclaim.JSONKey(); got != "direct_reclaim_pages_per_s" {
		t.Errorf("JSONKey = %q", got)
	}
}
