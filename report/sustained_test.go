package report

import (
	"strings"
	"testing"

	"github.com/memdiag/memdiag/correlate"
	"github.com/memdiag/memdiag/timers"
)

// Sustained pressure in a --cgroup analysis (the real recording
// correlate/testdata/real/trial-s7-mem-job: the 256 MiB group stalled 6 %
// of the time, with 8 episodes above that) says the episodes rose above
// it, never "no episode", and lists the group's processes only: the
// recording also holds other tenants' processes (the e2e suite's hog and
// websvc, Go builds), which cannot cause the group's reclaim.
func TestSustainedCgroupScope(t *testing.T) {
	r := analyzeFile(t, "real/trial-s7-mem-job.jsonl.gz", correlate.Options{Project: timers.Project})
	s := r.Sustained
	if s == nil || s.Scope != correlate.PSICgroup {
		t.Fatalf("sustained %+v, want the cgroup's", s)
	}
	if len(r.Episodes) != 8 {
		t.Fatalf("%d episodes, want 8", len(r.Episodes))
	}
	for _, p := range s.IO {
		if p.Comm != "web.py" && p.Comm != "python3" && p.Comm != "batch.py" {
			t.Errorf("reclaim-driving list holds %s %d (unit %q), outside the group", p.Comm, p.PID, p.Unit)
		}
	}
	var mem []string
	for _, m := range s.Memory {
		mem = append(mem, m.Comm)
		if m.Comm == "record.test" || m.Comm == "gopls" || m.Comm == "link" {
			t.Errorf("memory list holds %s %d, outside the group", m.Comm, m.PID)
		}
	}
	if len(s.Memory) == 0 || s.OutsideLeftOut == 0 {
		t.Errorf("memory %v, %d left out: want the group's holders and the others counted", mem, s.OutsideLeftOut)
	}
	var b strings.Builder
	sustainedText(&b, &r, "  - ")
	out := b.String()
	for _, want := range []string{
		"It is the baseline of this recording: the 8 episodes below rose further above it.",
		"outside the analysed cgroup left out of these lists: they cannot cause its reclaim",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("sustained text lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "no episode") {
		t.Errorf("sustained text says no episode beside 8:\n%s", out)
	}
}
