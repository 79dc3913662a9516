package gate

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/memdiag/memdiag/lru"
	"github.com/memdiag/memdiag/psi"
	"github.com/memdiag/memdiag/record"
)

func TestReadVMStat(t *testing.T) {
	tests := []struct {
		fixture string
		want    *lru.VMStat
	}{
		{
			// Values read off the file by hand (grep).
			fixture: "linux-6.18",
			want: &lru.VMStat{
				PgscanKswapd: u64(0), PgscanDirect: u64(0), PgstealKswapd: u64(0), PgstealDirect: u64(0),
				WorkingsetRefaultFile: u64(1171869), WorkingsetRefaultAnon: u64(1601),
				WorkingsetActivate: u64(58701 + 0), // _file + _anon
				Pgmajfault:         u64(2988),
				Allocstall:         u64(0), // sum of allocstall_{dma,dma32,normal,movable,device}
				OOMKill:            u64(2), Pswpin: u64(68), Pswpout: u64(32945),
			},
		},
		{
			// An older kernel: per-zone counters summed, names before 5.9.
			fixture: "node-exporter-v1.12.1",
			want: &lru.VMStat{
				PgscanKswapd:          u64(0 + 107656 + 358784 + 0),
				PgscanDirect:          u64(0 + 67 + 6796 + 0), // pgscan_direct_throttle is not a zone
				PgstealKswapd:         u64(0 + 78783 + 254128 + 0),
				PgstealDirect:         u64(0 + 44 + 6484 + 0),
				WorkingsetRefaultFile: u64(157066), // workingset_refault
				WorkingsetActivate:    u64(104270),
				Pgmajfault:            u64(507162),
				Allocstall:            u64(83165),
				OOMKill:               u64(0), Pswpin: u64(1476), Pswpout: u64(35045),
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.fixture, func(t *testing.T) {
			got, err := ReadVMStat(filepath.Join("testdata", tt.fixture, "proc", "vmstat"))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ReadVMStat (-want +got):\n%s", diff)
			}
		})
	}
}

func TestReadVMStatEdgeCases(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	// A throttle count must not be summed into direct scanning.
	got, err := ReadVMStat(write("throttle", "pgscan_direct_normal 10\npgscan_direct_dma32 5\npgscan_direct_throttle 99\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got.PgscanDirect == nil || *got.PgscanDirect != 15 || got.OOMKill != nil {
		t.Errorf("PgscanDirect = %v, OOMKill = %v; want 15 and absent (nil)", got.PgscanDirect, got.OOMKill)
	}
	_, err = ReadVMStat(write("bad", "pswpin 1\npswpout x\n"))
	if err == nil || !strings.Contains(err.Error(), filepath.Join(dir, "bad")+`:2: malformed vmstat line: "pswpout x"`) {
		t.Errorf("bad line error = %v; want file:2 named", err)
	}
	_, err = ReadVMStat(write("empty", ""))
	if err == nil || !strings.Contains(err.Error(), "empty vmstat") {
		t.Errorf("empty file error = %v", err)
	}
	if _, err := ReadVMStat(filepath.Join(dir, "missing")); !os.IsNotExist(err) {
		t.Errorf("missing file error = %v; want not-exist", err)
	}
}

func TestReadCgroupCounters(t *testing.T) {
	// gopsutil's cgroup v2 fixture: memory.stat has pgmajfault but none of
	// the reclaim or swap counters; memory.events has oom_kill 0.
	got, err := ReadCgroupCounters(filepath.Join("testdata", "gopsutil-cgroup2"))
	if err != nil {
		t.Fatal(err)
	}
	want := &lru.VMStat{Pgmajfault: u64(10), OOMKill: u64(0)}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ReadCgroupCounters (-want +got):\n%s", diff)
	}

	// Newer keys (cgroup-v2.rst, memory.stat) built by hand.
	dir := t.TempDir()
	stat := "anon 1048576\nworkingset_refault_anon 7\nworkingset_refault_file 300\npswpin 2\npswpout 40\n" +
		"pgscan_kswapd 5\npgscan_direct 11\npgsteal_kswapd 4\npgsteal_direct 9\npgmajfault 3\n"
	if err := os.WriteFile(filepath.Join(dir, "memory.stat"), []byte(stat), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err = ReadCgroupCounters(dir)
	if err != nil {
		t.Fatal(err)
	}
	want = &lru.VMStat{WorkingsetRefaultAnon: u64(7), WorkingsetRefaultFile: u64(300), Pswpin: u64(2), Pswpout: u64(40),
		PgscanKswapd: u64(5), PgscanDirect: u64(11), PgstealKswapd: u64(4), PgstealDirect: u64(9), Pgmajfault: u64(3)}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ReadCgroupCounters (-want +got):\n%s", diff)
	}

	// A v2 group without the memory controller has neither file.
	if got, err := ReadCgroupCounters(t.TempDir()); got != nil || err != nil {
		t.Errorf("empty group = %v, %v; want nil, nil", got, err)
	}
	if err := os.WriteFile(filepath.Join(dir, "memory.events"), []byte("oom_kill\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadCgroupCounters(dir); err == nil || !strings.Contains(err.Error(), "memory.events:1: malformed line") {
		t.Errorf("bad memory.events error = %v", err)
	}
}

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
	mk("cg/memory.pressure", line)
	mk("cg/cgroup.procs", "")
	mk("cg/memory.events", "oom_kill 4\n")
	c, err := psi.NewCollector(filepath.Join(root, "proc"), psi.WithCgroup(filepath.Join(root, "cg")))
	if err != nil {
		t.Fatal(err)
	}
	sp := &record.Sampler{Sources: []record.Source{PSISource{C: c}, VMStatSource{ProcRoot: filepath.Join(root, "proc")},
		CgroupCountersSource{Dir: filepath.Join(root, "cg")}}}
	s := sp.Collect(context.Background(), 0)
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
