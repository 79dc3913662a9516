package mem

import (
	"bytes"
	"encoding/csv"
	"errors"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/memdiag/memdiag/internal/format"
	"github.com/memdiag/memdiag/memstate"
)

func TestRenderOOMSection(t *testing.T) {
	three := uint64(3)
	r := memstate.Report{
		Time: time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC),
		OOM: memstate.OOMReport{
			LogSource: "dmesg",
			Kills: []memstate.OOMKill{{
				SinceBoot: 90 * time.Second, PID: 2915, Comm: "hog", AnonRSSBytes: 64360 << 10,
				Constraint: "memcg", OOMCgroup: "/docker/a", TaskCgroup: "/docker/a/b",
				// The kernel's "CPU: 1 PID: 2918 Comm: hog": a thread of
				// the hog, whose process is the task table's row.
				Trigger: &memstate.OOMTrigger{Comm: "hog", PID: 2918, GFPMask: "0xcc0(GFP_KERNEL)"},
				Tasks:   []memstate.OOMTask{{PID: 2915, TGID: 2915, Name: "hog", Victim: true}},
			}, {
				// A global OOM names the task's cgroup and no limit.
				SinceBoot: 95 * time.Second, PID: 846, Comm: "tail", Constraint: "global", TaskCgroup: "/user.slice",
			}},
			VMStatOOMKills: &three,
			CgroupOOMKills: []memstate.CgroupCount{{Path: "/docker/a", Version: 2, OOMKills: 1}},
		},
	}
	for _, f := range []format.Format{format.Table, format.Markdown} {
		var b bytes.Buffer
		if err := Render(&b, r, f, Options{TopCgroups: 5}); err != nil {
			t.Fatal(err)
		}
		s := b.String()
		for _, want := range []string{
			"From dmesg: 2 OOM kills in the kernel log.",
			"The kernel counted 3 since boot: the others' messages have left the log.",
			"global", "/user.slice",
			"2915", "hog", "62.9 MiB", "1m30s", "/docker/a/b (limit of /docker/a)",
			"Counters since boot: /proc/vmstat oom_kill 3; /docker/a oom_kill 1.",
			"triggered by hog (thread ID 2918, no process of that PID in the task table) asking for 1 page(s)",
		} {
			if !strings.Contains(s, want) {
				t.Errorf("%s output lacks %q:\n%s", f, want, s)
			}
		}
		if strings.Contains(s, "/user.slice (limit of") {
			t.Errorf("%s output gives the global OOM kill's cgroup a limit:\n%s", f, s)
		}
	}
	if err := Render(&bytes.Buffer{}, r, "xml", Options{}); !errors.Is(err, format.ErrUnknown) {
		t.Errorf("Render(xml) = %v, want format.ErrUnknown", err)
	}
}

func TestRenderCSV(t *testing.T) {
	// Long form, one value per row; byte counts above 2^53 keep every digit.
	lim := uint64(9223372036854771712)
	r := memstate.Report{
		Host:    memstate.Host{TotalBytes: 25276510208},
		Cgroups: []memstate.Cgroup{{Path: "/a,b", Version: 1, UsageBytes: 5, LimitBytes: &lim, Events: map[string]uint64{"oom_kill": 2}}},
		OOM:     memstate.OOMReport{Kills: []memstate.OOMKill{{PID: 846, Comm: "tail", AnonRSSBytes: 158277632}}},
	}
	var b bytes.Buffer
	if err := Render(&b, r, format.CSV, Options{}); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&b).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	have := map[string]string{}
	for _, row := range rows[1:] {
		have[row[0]+"|"+row[1]+"|"+row[2]] = row[3]
	}
	for k, want := range map[string]string{
		"host||total_bytes":              "25276510208",
		"cgroup|/a,b|limit_bytes":        "9223372036854771712",
		"cgroup|/a,b|events.oom_kill":    "2",
		"oom_kill|846|comm":              "tail",
		"oom_kill|846|anon_rss_bytes":    "158277632",
		"verdict||used_with_cache_bytes": "0",
	} {
		if have[k] != want {
			t.Errorf("%s = %q, want %q", k, have[k], want)
		}
	}
	if strings.Join(rows[0], ",") != "section,id,field,value" {
		t.Errorf("header %v", rows[0])
	}
}

// TestRenderAllocatorsOnRequest: each process's allocator reading (ten
// lines of prose for the default --top 10, issue 31 item 2) is written
// only with Options.Allocators; without it one line says how to ask.
// JSON has the readings either way. Evidence as this host gave it
// (glibc, 9 threads, 2 CPUs online); the reading is written from it.
func TestRenderAllocatorsOnRequest(t *testing.T) {
	retain := "glibc malloc, 9 threads, up to 16 arenas on 2 CPUs online: freed memory can stay in the arenas; if the program's own heap is flat, likely retention: try MALLOC_ARENA_MAX=2"
	r := memstate.Report{Procs: []memstate.Proc{
		{PID: 4242, Comm: "retain", Retention: &memstate.Retention{Threads: 9, Allocators: []string{"glibc"}, CPUsOnline: 2, ArenasMax: 16}},
		{PID: 4243, Comm: "sleep"},
	}}
	for _, tc := range []struct {
		o       Options
		reading bool
	}{{Options{}, false}, {Options{Allocators: true}, true}} {
		var b bytes.Buffer
		if err := Render(&b, r, format.Table, tc.o); err != nil {
			t.Fatal(err)
		}
		s := b.String()
		if got := strings.Contains(s, "retain (PID 4242), allocator: "+retain+"."); got != tc.reading {
			t.Errorf("Allocators %v: reading written %v:\n%s", tc.o.Allocators, got, s)
		}
		if got := strings.Contains(s, "--allocators."); got == tc.reading {
			t.Errorf("Allocators %v: the --allocators hint written %v:\n%s", tc.o.Allocators, got, s)
		}
		if strings.Contains(s, "sleep (PID 4243), allocator") {
			t.Errorf("a process without a reading got one:\n%s", s)
		}
	}
	var b bytes.Buffer
	if err := Render(&b, r, format.JSON, Options{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "likely retention: try MALLOC_ARENA_MAX=2") {
		t.Errorf("JSON lacks the reading:\n%s", b.String())
	}
}

// TestOOMTableFits80: the OOM kills table of a group killed at a 240 MiB
// limit, with a 9-character process name, fits an 80-column terminal
// (a trial's was 83 columns wide), the hidden columns named under it.
func TestOOMTableFits80(t *testing.T) {
	var kills []memstate.OOMKill
	for i, comm := range []string{"farmread", "checkread"} {
		kills = append(kills, memstate.OOMKill{PID: 24306 + i, Comm: comm, Constraint: "memcg", OOMCgroup: "/memdiag-e2e-nsp", TaskCgroup: "/memdiag-e2e-nsp",
			CgroupUsageBytes: 240 << 20, CgroupLimitBytes: 240 << 20, AnonRSSBytes: 77056 << 10,
			Time: time.Date(2026, 12, 7, 16, 15, 39, 0, time.UTC), SinceBoot: 48 * time.Minute})
	}
	r := memstate.Report{Host: memstate.Host{TotalBytes: 24 << 30}, OOM: memstate.OOMReport{LogSource: "/dev/kmsg", Kills: kills}}
	var b bytes.Buffer
	if err := Render(&b, r, format.Table, Options{Width: 80, Loc: time.UTC}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "checkread") || !strings.Contains(b.String(), "/memdiag-e2e") {
		t.Fatalf("no kill rows:\n%s", b.String())
	}
	// The table's lines (prose is wrapped by the terminal writer).
	for _, l := range strings.Split(b.String(), "\n") {
		if n := utf8.RuneCountInString(l); n > 80 && strings.ContainsAny(l, "│─") {
			t.Errorf("%d columns: %q", n, l)
		}
	}
}

// TestRootSaidAsRead: a tree read with mem --root is named with when it
// was read (its own time is not known), and a pressure not measured
// there says why and whose PSI averages are shown; the live host keeps
// "Memory at" and the plain reason.
func TestRootSaidAsRead(t *testing.T) {
	at := time.Date(2026, 12, 7, 19, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		root, title, why string
	}{
		{"testdata/host618", "Memory under testdata/host618, read at 2026-12-07T19:00:00Z\n",
			" Pressure was not measured: the files under testdata/host618 were read once (--interval reads them twice, for a live tree); the PSI averages shown are the file's own."},
		{"", "Memory at 2026-12-07T19:00:00Z\n", " Pressure was not measured (no interval between two reads)."},
	} {
		var b bytes.Buffer
		if err := Render(&b, memstate.Report{Time: at, Root: c.root}, format.Table, Options{}); err != nil {
			t.Fatal(err)
		}
		if s := b.String(); !strings.HasPrefix(s, c.title) || !strings.Contains(s, c.why) {
			t.Errorf("root %q:\n%s\nwant it to begin %q and say %q", c.root, s, c.title, c.why)
		}
	}
}
