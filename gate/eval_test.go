package gate

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/memdiag/memdiag/gate/gatetest"
	"github.com/memdiag/memdiag/record"
)

// The synthetic runs of gate/gatetest.
type step = gatetest.Step

var (
	at      = gatetest.At
	u64     = gatetest.U64
	psiSnap = gatetest.PSI
	host    = gatetest.Host
)

func mustParse(t *testing.T, exprs ...string) []*Threshold {
	t.Helper()
	ths, err := ParseAll(exprs)
	if err != nil {
		t.Fatal(err)
	}
	return ths
}

// got is the part of a Result the tests compare.
type got struct {
	Status   Status
	Observed float64
	Worst    *Moment
	Covered  time.Duration
}

func summarize(rep *Report) []got {
	var out []got
	for _, r := range rep.Results {
		g := got{Status: r.Status, Observed: r.Observed, Worst: r.Worst, Covered: r.Covered}
		if math.IsNaN(g.Observed) {
			g.Observed = -1 // NaN never compares equal
		}
		out = append(out, g)
	}
	return out
}

// approx compares floats to 1e-9 relative, enough for sums of µs.
var approx = cmp.Comparer(func(a, b float64) bool {
	return a == b || math.Abs(a-b) <= 1e-9*math.Max(math.Abs(a), math.Abs(b))
})

func TestEvaluateStallShareFromTotals(t *testing.T) {
	// some: +100 ms, +0, +300 ms, +50 ms over four 1 s intervals
	//   = 450 ms / 4 s = 11.25 %; worst 2..3 s at 30 %.
	// full: +0, +50 ms, +0, +0 = 50 ms / 4 s = 1.25 %; worst 1..2 s at 5 %.
	samples := host(
		step{Sec: 0, SomeUS: 0, FullUS: 0},
		step{Sec: 1, SomeUS: 100_000, FullUS: 0},
		step{Sec: 2, SomeUS: 100_000, FullUS: 50_000},
		step{Sec: 3, SomeUS: 400_000, FullUS: 50_000},
		step{Sec: 4, SomeUS: 450_000, FullUS: 50_000},
	)
	ths := mustParse(t,
		"memory.some.stall<5%", "memory.some.stall<12%", "memory.full.stall<1%",
		"memory.some.total<500ms", "memory.some.total<=400ms", "memory.some.stall>20%")
	rep := Evaluate(nil, samples, Scope{}, ths)
	want := []got{
		{Fail, 11.25, &Moment{at(2), at(3), 30}, 4 * time.Second},
		{Pass, 11.25, &Moment{at(2), at(3), 30}, 4 * time.Second},
		{Fail, 1.25, &Moment{at(1), at(2), 5}, 4 * time.Second},
		{Pass, 0.45, &Moment{at(2), at(3), 0.3}, 4 * time.Second},
		{Fail, 0.45, &Moment{at(2), at(3), 0.3}, 4 * time.Second},
		// A floor: the worst moment is the calmest interval (1..2 s, 0 %).
		{Fail, 11.25, &Moment{at(1), at(2), 0}, 4 * time.Second},
	}
	if diff := cmp.Diff(want, summarize(rep), approx); diff != "" {
		t.Errorf("results (-want +got):\n%s", diff)
	}
	if rep.Samples != 5 || !rep.Start.Equal(at(0)) || !rep.End.Equal(at(4)) {
		t.Errorf("report run = %d samples %v..%v; want 5, %v..%v", rep.Samples, rep.Start, rep.End, at(0), at(4))
	}
	if rep.Passed() {
		t.Error("Passed() = true with breaches")
	}
}

func TestEvaluateUnevenIntervalsWeighByWallTime(t *testing.T) {
	// 250 ms stalled in 0.5 s (50 %), then 100 ms in 2 s (5 %):
	// 350 ms / 2.5 s = 14 %, not the mean of the shares (27.5 %).
	samples := host(step{Sec: 0}, step{Sec: 0.5, SomeUS: 250_000}, step{Sec: 2.5, SomeUS: 350_000})
	rep := Evaluate(nil, samples, Scope{}, mustParse(t, "memory.some.stall<15%"))
	want := []got{{Pass, 14, &Moment{at(0), at(0.5), 50}, 2500 * time.Millisecond}}
	if diff := cmp.Diff(want, summarize(rep), approx); diff != "" {
		t.Errorf("results (-want +got):\n%s", diff)
	}
}

func TestEvaluateCounters(t *testing.T) {
	// pswpout 100 → 200 → 50 (reset: interval skipped) → 150:
	//   (100 + 100) pages × 4096 B = 819200 B = 0.78125 MiB over 2 of 3 s.
	// refault 0 → 1000 → 3000 → 3000 pages: 3000 / 3 s = 1000 pages/s
	//   = 1000 × 4096 / 2^20 = 3.90625 MiB/s; worst 1..2 s at 2000/s.
	// oom_kill 5 → 5 → 6 → 6: one kill, in 1..2 s.
	// pgscan_direct absent in the third sample: two intervals lack it.
	samples := host(
		step{Sec: 0, Pswpout: u64(100), Refault: u64(0), OOMKill: u64(5), PgscanDrct: u64(0)},
		step{Sec: 1, Pswpout: u64(200), Refault: u64(1000), OOMKill: u64(5), PgscanDrct: u64(10)},
		step{Sec: 2, Pswpout: u64(50), Refault: u64(3000), OOMKill: u64(6)},
		step{Sec: 3, Pswpout: u64(150), Refault: u64(3000), OOMKill: u64(6), PgscanDrct: u64(40)},
	)
	ths := mustParse(t, "swap.out<1MiB", "swap.out==0", "refault.file.rate<500/s", "refault.file.rate<4MiB/s", "oom_kills==0", "reclaim.direct.rate<20/s")
	rep := Evaluate(nil, samples, Scope{}, ths)
	// A threshold that held over only part of the run (2 of 3 s for
	// swap.out after the reset, 1 of 3 s for direct reclaim) is no data:
	// the interval without the signal could have broken it. A breach seen
	// stays a breach.
	want := []got{
		{NoData, 819200, &Moment{at(0), at(1), 409600}, 2 * time.Second},
		{Fail, 819200, &Moment{at(0), at(1), 409600}, 2 * time.Second},
		{Fail, 1000, &Moment{at(1), at(2), 2000}, 3 * time.Second},
		{Pass, 1000 * 4096, &Moment{at(1), at(2), 2000 * 4096}, 3 * time.Second},
		{Fail, 1, &Moment{at(1), at(2), 1}, 3 * time.Second},
		{NoData, 10, &Moment{at(0), at(1), 10}, time.Second},
	}
	if diff := cmp.Diff(want, summarize(rep), approx); diff != "" {
		t.Errorf("results (-want +got):\n%s", diff)
	}
	if got, want := rep.Results[5].Why, (Unjudged{Kind: PartlyCovered, Span: 3 * time.Second}); got != want {
		t.Errorf("why = %+v, want %+v", got, want)
	}
}

func TestEvaluatePageSizeFromHeader(t *testing.T) {
	samples := host(step{Sec: 0, Pswpout: u64(0)}, step{Sec: 1, Pswpout: u64(64)})
	rep := Evaluate(&record.Header{PageSize: 16384}, samples, Scope{}, mustParse(t, "swap.out<1MiB"))
	// 64 pages × 16 KiB = 1 MiB: not below 1 MiB.
	if r := rep.Results[0]; r.Status != Fail || r.Observed != 1<<20 {
		t.Errorf("swap.out with 16 KiB pages = %s %g; want fail 1048576", r.Status, r.Observed)
	}
}

func TestEvaluateAvgPeak(t *testing.T) {
	samples := host(step{Sec: 0, Avg10: 0}, step{Sec: 1, Avg10: 2.5}, step{Sec: 2, Avg10: 12}, step{Sec: 3, Avg10: 7})
	rep := Evaluate(nil, samples, Scope{}, mustParse(t, "memory.some.avg10<10", "memory.some.avg10<=12", "memory.some.avg10>1"))
	want := []got{
		{Fail, 12, &Moment{at(1), at(2), 12}, 0},
		{Pass, 12, &Moment{at(1), at(2), 12}, 0},
		// A floor's observed value is the lowest sample (the first, 0).
		{Fail, 0, &Moment{at(0), at(0), 0}, 0},
	}
	if diff := cmp.Diff(want, summarize(rep), approx); diff != "" {
		t.Errorf("results (-want +got):\n%s", diff)
	}
}

func TestEvaluateCgroupScope(t *testing.T) {
	// Host PSI is busy; the group is calm except one 200 ms stall.
	samples := host(step{Sec: 0}, step{Sec: 1, SomeUS: 900_000}, step{Sec: 2, SomeUS: 1_800_000})
	samples[0].CgroupPSI = psiSnap(step{})
	samples[1].CgroupPSI = psiSnap(step{SomeUS: 200_000})
	samples[2].CgroupPSI = psiSnap(step{SomeUS: 200_000})
	samples[0].CgroupVMStat = &record.VMStat{Pswpout: u64(10)}
	samples[2].CgroupVMStat = &record.VMStat{Pswpout: u64(30)}
	rep := Evaluate(nil, samples, Scope{Cgroup: "/sys/fs/cgroup/x"}, mustParse(t, "memory.some.stall<5%", "swap.out<=0"))
	if rep.Results[0].Observed != 10 || rep.Results[0].Status != Fail {
		t.Errorf("cgroup memory.some.stall = %s %g; want fail 10 (200 ms of 2 s)", rep.Results[0].Status, rep.Results[0].Observed)
	}
	// Sample 1 has no cgroup counters: both intervals touching it are lost.
	if r := rep.Results[1]; r.Status != NoData {
		t.Errorf("cgroup swap.out = %s %g; want no data", r.Status, r.Observed)
	} else if r.Why.Kind != MissingSignal || !strings.Contains(r.Why.Missing.Error(), "no pswpout counter for cgroup /sys/fs/cgroup/x") {
		t.Errorf("why = %+v", r.Why)
	}
	if got := rep.Scope.String(); got != "cgroup /sys/fs/cgroup/x" {
		t.Errorf("Scope = %q", got)
	}
}

func TestEvaluateNoDataIsNeverAPass(t *testing.T) {
	noPSI := []record.Sample{
		{Time: at(0), Errors: []string{"psi: /proc/pressure/memory: permission denied"}},
		{Time: at(1)},
	}
	tests := []struct {
		name    string
		samples []record.Sample
		scope   Scope
		expr    string
		kind    UnjudgedKind
		missing string // the SignalMissing error
	}{
		{"no samples", nil, Scope{}, "memory.some.stall<1%", NoSamples, ""},
		{"one sample", host(step{Sec: 0}), Scope{}, "memory.some.stall<1%", OneSample, ""},
		{"no host PSI", noPSI, Scope{}, "memory.full.stall<1%", MissingSignal,
			`no memory PSI (/proc/pressure/memory, "full" line); first collector error: psi: /proc/pressure/memory: permission denied`},
		{"no cgroup PSI", host(step{Sec: 0}, step{Sec: 1}), Scope{Cgroup: "/cg"}, "memory.some.avg10<1", MissingSignal,
			`no memory PSI (memory.pressure, "some" line) for cgroup /cg`},
		{"no vmstat counter", host(step{Sec: 0}, step{Sec: 1}), Scope{}, "oom_kills==0", MissingSignal, "no oom_kill counter in /proc/vmstat"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rep := Evaluate(nil, tt.samples, tt.scope, mustParse(t, tt.expr))
			r := rep.Results[0]
			if r.Status != NoData || !math.IsNaN(r.Observed) || r.Worst != nil {
				t.Errorf("result = %s %g %v; want no data, NaN, no moment", r.Status, r.Observed, r.Worst)
			}
			missing := ""
			if r.Why.Missing != nil {
				missing = r.Why.Missing.Error()
			}
			if r.Why.Kind != tt.kind || missing != tt.missing {
				t.Errorf("why = %d, %q; want %d, %q", r.Why.Kind, missing, tt.kind, tt.missing)
			}
			if rep.Passed() {
				t.Error("Passed() = true with no data")
			}
		})
	}
}

func TestPreflight(t *testing.T) {
	s := host(step{Sec: 0, Pswpout: u64(1)})[0]
	if err := Preflight(&s, Scope{}, mustParse(t, "memory.full.stall<1%", "memory.some.avg10<5", "swap.out<1MiB")); err != nil {
		t.Errorf("Preflight with every signal present: %v", err)
	}
	err := Preflight(&s, Scope{Cgroup: "/cg"}, mustParse(t, "memory.full.stall<1%", "oom_kills==0"))
	want := "cannot judge these thresholds:\n" +
		`  memory.full.stall<1%: no memory PSI (memory.pressure, "full" line) for cgroup /cg` + "\n" +
		"  oom_kills==0: no oom_kill counter for cgroup /cg (cgroup v2 memory.stat/memory.events, or on a hybrid host the v1 memory group of the same path; v1 has no pgscan, pgsteal or swap counters per group)"
	if err == nil {
		t.Fatal("Preflight without cgroup signals succeeded")
	}
	if diff := cmp.Diff(want, err.Error()); diff != "" {
		t.Errorf("error (-want +got):\n%s", diff)
	}
}

func TestCommandFailureFailsTheReport(t *testing.T) {
	rep := Evaluate(nil, host(step{Sec: 0}, step{Sec: 1}), Scope{}, mustParse(t, "memory.some.stall<1%"))
	if !rep.Passed() {
		t.Fatal("calm run did not pass")
	}
	rep.Command = &CommandResult{Args: []string{"./load.sh"}, ExitCode: 3}
	if rep.Passed() {
		t.Error("Passed() = true although the command exited 3")
	}
}

func TestEnvErrorReport(t *testing.T) {
	ths := mustParse(t, "memory.full.stall<1%", "swap.out<1MiB")
	s := host(step{Sec: 0, Pswpout: u64(1)})[0]
	s.PSI = nil
	err := Preflight(&s, Scope{}, ths)
	var ee *EnvError
	if !errors.As(err, &ee) {
		t.Fatalf("Preflight = %v; want *EnvError", err)
	}
	rep := ee.Report(Scope{}, at(0), ths)
	var reasons []string
	for _, r := range rep.Results {
		if r.Status != NoData {
			t.Errorf("%s: status %s; want no data", r.Threshold.Expr, r.Status)
		}
		why := fmt.Sprint(r.Why.Kind)
		if r.Why.Missing != nil {
			why += " " + r.Why.Missing.Error()
		}
		reasons = append(reasons, why)
	}
	want := []string{fmt.Sprint(MissingSignal) + ` no memory PSI (/proc/pressure/memory, "full" line)`, fmt.Sprint(NotStarted)}
	if diff := cmp.Diff(want, reasons); diff != "" {
		t.Errorf("reasons (-want +got):\n%s", diff)
	}
	if rep.Passed() {
		t.Error("a run that could not start passed")
	}
}

// Under --cgroup, refault.file.rate is the group's own memory.stat
// workingset_refault_file (10 pages/s), never the host's /proc/vmstat
// (1000 pages/s), so the "scope: cgroup" line holds for every row.
func TestEvaluateCgroupScopeRefault(t *testing.T) {
	samples := host(step{Sec: 0, Refault: u64(0)}, step{Sec: 2, Refault: u64(2000)})
	samples[0].CgroupPSI, samples[1].CgroupPSI = psiSnap(step{}), psiSnap(step{})
	samples[0].CgroupVMStat = &record.VMStat{WorkingsetRefaultFile: u64(100)}
	samples[1].CgroupVMStat = &record.VMStat{WorkingsetRefaultFile: u64(120)}
	rep := Evaluate(nil, samples, Scope{Cgroup: "/sys/fs/cgroup/unified/mdtrial"}, mustParse(t, "refault.file.rate<500/s"))
	if r := rep.Results[0]; r.Status != Pass || r.Observed != 10 {
		t.Errorf("cgroup refault.file.rate = %s %g; want pass 10 (20 pages in 2 s, not the host's 1000/s)", r.Status, r.Observed)
	}
	// The "scope: cgroup" run line is report/gatereport's TestRunLineCgroupScope.
}
