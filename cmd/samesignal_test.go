package cmd

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/memdiag/memdiag/internal/format"
	"github.com/memdiag/memdiag/internal/iostreams"
	"github.com/memdiag/memdiag/internal/testutil/hogsample"
	"github.com/memdiag/memdiag/memstate"
	"github.com/memdiag/memdiag/record"
	"github.com/memdiag/memdiag/signal"
)

// hogSample is one sample of the real 6.18 trees testdata/linux-6.18-hog-t0
// and -t1 (a memory hog OOM-killed in a 64 MiB group; see their SOURCE),
// as watch records it.
func hogSample(t *testing.T, which string, seq int, at time.Time) record.Sample {
	t.Helper()
	h := hogsample.Read(t, which)
	return record.Sample{Seq: seq, Time: at, VMStat: record.FromVMStat(h.VMStat), Meminfo: record.FromMeminfo(h.Meminfo),
		PSI: record.FromPSI(&h.PSI), Disks: record.FromDisks(h.Disks)}
}

// TestSameSignalEverywhere is the catalogue's promise through each
// command's own output: for one pair of real samples, every catalogue
// entry has the same name, unit and value in `analyze --format json`
// (the recording's "catalogue"), `gate --format json` (each threshold's
// "signal") and `mem --format json` (activity.signals, for the entries of
// the files mem reads: /proc/vmstat and /proc/pressure/memory). The
// values themselves are checked by hand in package signal's test of the
// same name (hogWant: e.g. swap_out 32945 − 12154 = 20791 pages in
// 1.15158156 s = 18054.3 pages/s).
func TestSameSignalEverywhere(t *testing.T) {
	t.Setenv("GITHUB_STEP_SUMMARY", "")
	t0 := time.Date(2026, 11, 29, 21, 42, 0, 0, time.UTC)
	dt := 1151581560 * time.Nanosecond
	rec := filepath.Join(t.TempDir(), "hog.jsonl")
	w, err := record.Create(rec, false)
	if err != nil {
		t.Fatal(err)
	}
	s0, s1 := hogSample(t, "t0", 0, t0), hogSample(t, "t1", 1, t0.Add(dt))
	if err := w.WriteHeader(&record.Header{Host: "hog", Start: t0, Interval: time.Second, PageSize: 4096, TimeZone: "UTC"}); err != nil {
		t.Fatal(err)
	}
	for _, s := range []*record.Sample{&s0, &s1} {
		if err := w.WriteSample(s); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close("test"); err != nil {
		t.Fatal(err)
	}

	// analyze
	code, out, errOut := runCmd(t, "analyze", "--format", "json", rec)
	if code != exitOK {
		t.Fatalf("analyze: exit %d: %s", code, errOut)
	}
	var an struct {
		Catalogue []struct {
			Name, Key, Unit string
			Mean            *float64
		} `json:"catalogue"`
	}
	if err := json.Unmarshal([]byte(out), &an); err != nil {
		t.Fatal(err)
	}
	if len(an.Catalogue) != len(signal.Catalogue) {
		t.Fatalf("analyze: %d catalogue signals, the catalogue has %d", len(an.Catalogue), len(signal.Catalogue))
	}

	// mem, over a copy of hog-t0 whose vmstat and memory PSI become
	// hog-t1's between its two reads, dt apart.
	root := t.TempDir()
	if err := os.CopyFS(root, os.DirFS(filepath.Join("..", "testdata", "linux-6.18-hog-t0"))); err != nil {
		t.Fatal(err)
	}
	reads := 0
	ios, _, memOut, _ := iostreams.Test()
	opts := &memOptions{IO: ios, Root: root, Format: format.JSON, CollectOptions: memstate.CollectOptions{Top: 1, Interval: time.Millisecond,
		Now: func() time.Time { reads++; return t0.Add(time.Duration(reads-1) * dt) },
		BeforeSecondRead: func() {
			for _, f := range []string{"proc/vmstat", "proc/pressure/memory"} {
				b, err := os.ReadFile(filepath.Join("..", "testdata", "linux-6.18-hog-t1", f))
				if err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(root, f), b, 0o644); err != nil {
					t.Fatal(err)
				}
			}
		}}}
	if err := runMem(opts); err != nil {
		t.Fatal(err)
	}
	var mem struct {
		Activity struct {
			Signals map[string]float64 `json:"signals"`
		} `json:"activity"`
	}
	if err := json.Unmarshal(memOut.Bytes(), &mem); err != nil {
		t.Fatal(err)
	}
	memReads := func(sig *signal.Signal) bool {
		return sig.Source == "/proc/vmstat" || sig.Source == "/proc/pressure/memory"
	}

	for i, sig := range signal.Catalogue {
		t.Run(sig.Name, func(t *testing.T) {
			a := an.Catalogue[i]
			if a.Name != sig.Name || a.Key != sig.RateKey() || a.Unit != sig.RateUnit() || a.Mean == nil {
				t.Fatalf("analyze: %+v, want %s %s %s with a value", a, sig.Name, sig.RateKey(), sig.RateUnit())
			}
			want := *a.Mean
			if got, ok := mem.Activity.Signals[sig.RateKey()]; ok != memReads(sig) || ok && !closeTo(got, want) {
				t.Errorf("mem: signals[%q] = %v, %v; analyze %v, want it %v", sig.RateKey(), got, ok, want, memReads(sig))
			}
			if sig.Gate == "" {
				return
			}
			// gate: a threshold the run passes, in the metric's own units.
			expr := sig.Gate + "<1000000/s"
			switch {
			case sig.PSI != nil:
				expr = sig.Gate + "<100%"
			case sig.Aggregate == signal.Total && sig.Unit == signal.Pages:
				expr = sig.Gate + "<1GiB"
			case sig.Aggregate == signal.Total:
				expr = sig.Gate + "<1000000"
			}
			code, out, errOut := run(t, "/", "gate", "--format", "json", "--recording", rec, "-t", expr)
			if code != exitOK {
				t.Fatalf("gate %s: exit %d: %s", expr, code, errOut)
			}
			var g struct {
				Thresholds []struct {
					Signal *struct {
						Name, Key, Unit string
						Value           *float64
					} `json:"signal"`
				} `json:"thresholds"`
			}
			if err := json.Unmarshal([]byte(out), &g); err != nil {
				t.Fatal(err)
			}
			gs := g.Thresholds[0].Signal
			if gs == nil || gs.Name != sig.Name || gs.Key != sig.RateKey() || gs.Unit != sig.RateUnit() || gs.Value == nil || !closeTo(*gs.Value, want) {
				t.Errorf("gate %s: signal %+v, want %s %s %s = %v (analyze)", expr, gs, sig.Name, sig.RateKey(), sig.RateUnit(), want)
			}
		})
	}
	// One by hand: pswpout 12154 → 32945 over 1.15158156 s.
	if got, want := mem.Activity.Signals["swap_out_pages_per_s"], 20791/dt.Seconds(); !closeTo(got, want) {
		t.Errorf("mem swap_out_pages_per_s = %v, want %v", got, want)
	}
}

func closeTo(a, b float64) bool {
	return math.Abs(a-b) <= 1e-9*math.Max(1, math.Max(math.Abs(a), math.Abs(b)))
}
