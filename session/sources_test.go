package session

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/memdiag/memdiag/memstate"
	"github.com/memdiag/memdiag/process"
	"github.com/memdiag/memdiag/record"
	"github.com/memdiag/memdiag/report/mem"
)

// TestWatchSourceOrder: watch samples its sources, and lists its
// collectors in the header, in the order of sourceOrder, whatever
// the files defining them are called. The fixture root is a real 6.18
// /proc (testdata/linux-6.18/SOURCE) with no processes in it.
func TestWatchSourceOrder(t *testing.T) {
	o := &Options{
		Root:        "../testdata/linux-6.18",
		Interval:    time.Second,
		TopN:        5,
		NoTimers:    true,
		Events:      "off",
		LatencyFile: filepath.Join(t.TempDir(), "hey.csv"), // never created
	}
	ws, h, err := BuildSources(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	var got []string
	for _, s := range ws.List {
		got = append(got, s.Name())
	}
	// diskstats is in the header but not sampled: the fixture has no
	// /sys/block to tell disks from partitions.
	want := []string{"psi", "lru", "oom-kills", "latency", "procs"}
	if !slices.Equal(got, want) {
		t.Errorf("sources = %v, want %v", got, want)
	}
	var cols []string
	for _, c := range h.Collectors {
		cols = append(cols, c.Name)
	}
	// The victim lookup is no source: its status is listed last.
	wantCols := []string{"psi", "meminfo", "vmstat", "swaps", "diskstats", "procs", "victim"}
	if !slices.Equal(cols, wantCols) {
		t.Errorf("header collectors = %v, want %v", cols, wantCols)
	}
}

// TestWatchVictim: --victim's v2 group becomes the recorded cgroup scope
// and its v1 memory group feeds Sample.CgroupVMStat; an explicit
// --cgroup wins the scope, the victim is still recorded; a --victim that
// names nothing is a usage error before anything is recorded.
func TestWatchVictim(t *testing.T) {
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
	// This host's mount table (victim/testdata/hybrid) and PSI lines.
	mk("proc/7/mountinfo", "35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n"+
		"41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n")
	if err := os.Symlink("7", filepath.Join(root, "proc/self")); err != nil {
		t.Fatal(err)
	}
	psiLine := "some avg10=0.00 avg60=0.00 avg300=0.00 total=1\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n"
	mk("proc/pressure/memory", psiLine)
	mk("sys/fs/cgroup/unified/system.slice/web.service/memory.pressure", psiLine)
	mk("sys/fs/cgroup/unified/other/memory.pressure", psiLine)
	mk("sys/fs/cgroup/memory/system.slice/web.service/memory.stat", "total_pgmajfault 3\n")
	build := func(victim, cgroup string) (*Sources, *record.Header, error) {
		o := &Options{Root: root, Interval: time.Second,
			NoTimers: true, Events: "off", StallThreshold: 0, Victim: victim, Cgroup: cgroup}
		ws, h, err := BuildSources(context.Background(), o)
		if ws != nil {
			t.Cleanup(ws.Close)
		}
		return ws, h, err
	}
	uni := filepath.Join(root, "sys/fs/cgroup/unified/system.slice/web.service")
	_, h, err := build("web.service", "")
	if err != nil {
		t.Fatal(err)
	}
	if h.Cgroup != uni || h.Victim == nil || h.Victim.Unit != "web.service" || h.Victim.MemcgVersion != 1 {
		t.Fatalf("header cgroup %q, victim %+v", h.Cgroup, h.Victim)
	}
	if st := h.Collectors[len(h.Collectors)-1]; st.Name != "victim" || !st.Available {
		t.Errorf("victim status %+v", st)
	}
	var s record.Sample
	for _, src := range mustSources(t, build, "web.service", "") {
		if src.Name() == "cgroup-counters" {
			if err := src.Fill(context.Background(), &s); err != nil {
				t.Fatal(err)
			}
		}
	}
	if s.CgroupVMStat == nil || s.CgroupVMStat.Pgmajfault == nil || *s.CgroupVMStat.Pgmajfault != 3 {
		t.Errorf("CgroupVMStat %+v, want the v1 group's total_pgmajfault 3", s.CgroupVMStat)
	}

	// --cgroup as a directory under the root, or as a group path below
	// the cgroup2 mount: the same group (cgroupfs.Resolve).
	other := filepath.Join(root, "sys/fs/cgroup/unified/other")
	for _, v := range []string{"/sys/fs/cgroup/unified/other", "other"} {
		_, h, err = build("web.service", v)
		if err != nil {
			t.Fatal(err)
		}
		if h.Cgroup != other || h.Victim == nil {
			t.Errorf("--cgroup %s: header cgroup %q (want %q), victim %+v", v, h.Cgroup, other, h.Victim)
		}
	}

	_, _, err = build("nosuch.service", "")
	var ue *UsageError
	if !errors.As(err, &ue) || !strings.Contains(err.Error(), "nosuch.service") {
		t.Errorf("bad --victim: %v, want a usage error naming it", err)
	}

	// Neither --victim nor --probe: no victim, said once.
	_, h, err = build("", "")
	if err != nil {
		t.Fatal(err)
	}
	if st := h.Collectors[len(h.Collectors)-1]; h.Victim != nil || h.Cgroup != "" || st.Available || !strings.Contains(st.Reason, "--victim") {
		t.Errorf("no victim: cgroup %q, victim %+v, status %+v", h.Cgroup, h.Victim, st)
	}
}

func mustSources(t *testing.T, build func(string, string) (*Sources, *record.Header, error), victim, cgroup string) []record.Source {
	t.Helper()
	ws, _, err := build(victim, cgroup)
	if err != nil {
		t.Fatal(err)
	}
	return ws.List
}

// TestOnsetsUnavailableWithoutPSI (issue 29.6): with --stall-threshold on
// a root without /proc/pressure/memory no onset watcher runs, so the
// header lists "onsets" as unavailable, with the reason. Before, it was
// "available": true with the reason that PSI is unavailable.
func TestOnsetsUnavailableWithoutPSI(t *testing.T) {
	for _, tc := range []struct {
		root string
		want bool
	}{{"../testdata/linux-6.18-nopsi", false}, {"../testdata/linux-6.18", true}} {
		o := &Options{Root: tc.root, Interval: time.Second, TopN: 5, NoTimers: true, Events: "off",
			StallThreshold: 100 * time.Millisecond, StallWindow: time.Second}
		ws, h, err := BuildSources(context.Background(), o)
		if err != nil {
			t.Fatal(err)
		}
		ws.Close()
		var st *record.CollectorStatus
		for i := range h.Collectors {
			if h.Collectors[i].Name == "onsets" {
				st = &h.Collectors[i]
			}
		}
		switch {
		case st == nil:
			t.Errorf("%s: no onsets status in the header: %+v", tc.root, h.Collectors)
		case st.Available != tc.want:
			t.Errorf("%s: onsets %+v, want available %v", tc.root, *st, tc.want)
		case !tc.want && !strings.Contains(st.Reason, "pressure/memory"):
			t.Errorf("%s: onsets reason %q does not name pressure/memory", tc.root, st.Reason)
		}
	}
}

// TestReadRetentionWritesReading: the allocator evidence the recorder
// keeps carries its reading in words (the v1 format's "reading"), the
// report's for the same evidence; this test process is a Go program.
func TestReadRetentionWritesReading(t *testing.T) {
	col, err := memstate.NewCollector("/")
	if err != nil {
		t.Fatal(err)
	}
	st, err := process.ReadStat(context.Background(), "/proc", os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	ev, err := readRetention{col}.RetentionOf(os.Getpid(), st.StartTicks)
	if err != nil {
		t.Fatal(err)
	}
	if ev.Reading == "" || ev.Reading != mem.RetentionReading(ev) || !strings.Contains(ev.Reading, "a Go program") {
		t.Errorf("recorded reading %q; want the report's reading of %+v", ev.Reading, ev)
	}
}

// TestScope: the one scope rule of watch, record and gate — --cgroup when
// given; else the victim's v2 group, unless it is the root or its PSI
// cannot be read (then the host, said); else the host. The groups are
// this host's real cgroup2 mount's, where it has one.
func TestScope(t *testing.T) {
	mnt := "/sys/fs/cgroup/unified"
	if _, err := os.Stat(filepath.Join(mnt, "cgroup.procs")); err != nil {
		mnt = "/sys/fs/cgroup"
	}
	if _, err := os.Stat(filepath.Join(mnt, "memory.pressure")); err != nil {
		t.Skipf("no cgroup2 root with memory.pressure at %s: %v", mnt, err)
	}
	missing := filepath.Join(t.TempDir(), "gone.slice")
	for _, c := range []struct {
		cgroup     string
		v          *record.Victim
		want, warn string
	}{
		{"/given", &record.Victim{CgroupDir: mnt, Cgroup: "/x"}, "/given", ""},
		{"", nil, "", ""},
		{"", &record.Victim{CgroupDir: mnt, Cgroup: "/"}, "", ""},
		{"", &record.Victim{CgroupDir: mnt, Cgroup: "/system.slice"}, mnt, ""},
		{"", &record.Victim{CgroupDir: missing, Cgroup: "/gone.slice"}, "", "victim: its group's PSI cannot be read, the host's is used: " + missing},
	} {
		got, warn := Scope(c.cgroup, c.v)
		if got != c.want || !strings.HasPrefix(warn, c.warn) || (c.warn == "") != (warn == "") {
			t.Errorf("Scope(%q, %+v) = %q, %q; want %q, %q…", c.cgroup, c.v, got, warn, c.want, c.warn)
		}
	}
}
