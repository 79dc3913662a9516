package sources

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/memdiag/memdiag/internal/fixtures"
	"github.com/memdiag/memdiag/lru"
	"github.com/memdiag/memdiag/psi"
	"github.com/memdiag/memdiag/record"
)

func TestSourcesFillASample(t *testing.T) {
	// A fixture root with host PSI from this machine and a v2 group.
	root := t.TempDir()
	mk := func(p, content string) {
		p = filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	line := "some avg10=1.82 avg60=0.72 avg300=0.17 total=641648\nfull avg10=1.08 avg60=0.41 avg300=0.09 total=408339\n"
	mk("proc/pressure/memory", line)
	mk("proc/vmstat", "pswpout 12\noom_kill 1\n")
	meminfo, err := os.ReadFile(filepath.Join(fixtures.Proc(t, "linux-6.18"), "meminfo"))
	if err != nil {
		t.Fatal(err)
	}
	mk("proc/meminfo", string(meminfo))
	mk("cg/memory.pressure", line)
	mk("cg/cgroup.procs", "")
	mk("cg/memory.events", "oom_kill 4\n")
	c, err := psi.NewCollector(filepath.Join(root, "proc"), psi.WithCgroup(filepath.Join(root, "cg")))
	if err != nil {
		t.Fatal(err)
	}
	lc, err := lru.NewCollector(filepath.Join(root, "proc"))
	if err != nil {
		t.Fatal(err)
	}
	sp := &record.Sampler{Sources: []record.Source{PSI{C: c}, LRU{C: lc},
		CgroupCounters{Dir: filepath.Join(root, "cg")}}}
	s := sp.Collect(context.Background())
	if len(s.Errors) != 0 {
		t.Fatalf("errors: %v", s.Errors)
	}
	if s.PSI.Memory == nil || s.PSI.Memory.Full.Total != 408339000 || s.PSI.IO != nil {
		t.Errorf("host PSI = %+v; want memory only, full total 408339 µs", s.PSI)
	}
	if s.CgroupPSI == nil || s.CgroupPSI.Memory.Some.Avg10 != 1.82 {
		t.Errorf("cgroup PSI = %+v", s.CgroupPSI)
	}
	if *s.VMStat.Pswpout != 12 || *s.VMStat.OOMKill != 1 || *s.CgroupVMStat.OOMKill != 4 || s.CgroupVMStat.Pswpout != nil {
		t.Errorf("counters: host %+v, cgroup %+v", s.VMStat, s.CgroupVMStat)
	}
}
