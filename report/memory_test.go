package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/memdiag/memdiag/correlate"
	"github.com/memdiag/memdiag/internal/format"
	"github.com/memdiag/memdiag/memstate"
	"github.com/memdiag/memdiag/report/mem"
)

// TestMemorySections: an OOM kill is a timeline row stamped with the
// sample that counted it (12:00:30, as in the OOM KILLS list), and steady
// growth is listed with its slope and the leak-or-retention note.
func TestMemorySections(t *testing.T) {
	t0 := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	r := correlate.Result{Host: "h", Start: t0, End: t0.Add(time.Minute), Interval: time.Second, Intervals: 60, Location: time.UTC,
		OOMKills: []correlate.OOMKill{{Time: t0.Add(30 * time.Second), Count: 1, Exited: []string{"victim 3"}}},
		Growth:   []memstate.ProcGrowth{{PID: 9, Comm: "leaky", AnonSlope: 360, AnonR2: 0.99, Observed: time.Minute, AnonFirstBytes: 100 << 20, AnonLastBytes: 106 << 20, Growing: true}},
	}
	var b bytes.Buffer
	if err := Render(&b, r, format.Table, Options{}); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{" 12:00:30 │", "1 OOM kill; the recording does not name the victim; exited then: victim 3", "12:00:30: 1 OOM kill; the recording does not name the victim; exited then: victim 3", "MEMORY GROWTH", "leaky (pid 9): anonymous memory grew 360 MiB/h (R² 0.99) over 1m", mem.LeakOrRetention} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

// TestGrowthEvidenceRendered: a growth finding's evidence lines are
// nested under it in the table and Markdown, and in JSON as "evidence"
// beside the recorded "retention".
func TestGrowthEvidenceRendered(t *testing.T) {
	t0 := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	g := memstate.ProcGrowth{PID: 9, Comm: "retain", AnonSlope: 360, AnonR2: 0.99, Observed: time.Minute, AnonFirstBytes: 100 << 20, AnonLastBytes: 106 << 20, Growing: true}
	g.AttachRetention(&memstate.Retention{Allocators: []string{"glibc"}, Threads: 9, CPUsOnline: 2})
	r := correlate.Result{Host: "h", Start: t0, End: t0.Add(time.Minute), Interval: time.Second, Intervals: 60, Location: time.UTC,
		Growth: []memstate.ProcGrowth{g}}
	for _, c := range []struct {
		f    format.Format
		want []string
	}{
		{format.Table, []string{"  - retain (pid 9): anonymous memory grew 360 MiB/h", "\n    - RssAnon 100.0 MiB → 106.0 MiB, RssFile 0 B → 0 B, RssShmem 0 B → 0 B: the growth is anonymous memory",
			"\n    - allocator: glibc malloc, 9 threads, up to 16 arenas on 2 CPUs online: freed memory can stay in the arenas; if the program's own heap is flat, likely retention: try MALLOC_ARENA_MAX=2\n",
			"\n    - what tells a leak from retention: the program's live heap"}},
		{format.Markdown, []string{"\n- retain (pid 9): anonymous memory grew 360 MiB/h", "\n  - allocator: glibc malloc, 9 threads, up to 16 arenas"}},
		{format.JSON, []string{`"evidence":["RssAnon 100.0 MiB`, `"retention":{"allocators":["glibc"],"cpus_online":2,"glibc_arenas_max":16,"reading":"glibc malloc, 9 threads`}},
	} {
		var b bytes.Buffer
		if err := Render(&b, r, c.f, Options{}); err != nil {
			t.Fatal(err)
		}
		out := b.String()
		if c.f == format.JSON {
			var v any
			if err := json.Unmarshal(b.Bytes(), &v); err != nil {
				t.Fatal(err)
			}
			compact, _ := json.Marshal(v) // keys sorted
			out = string(compact)
		}
		for _, want := range c.want {
			if !strings.Contains(out, want) {
				t.Errorf("%v output lacks %q:\n%s", c.f, want, out)
			}
		}
	}
}

// An OOM kill of another tenant in a --cgroup analysis: with the victim
// recorded from the kernel log it is named with its memory cgroup and
// said to be outside the group; without it, the group's own oom_kill
// counter (0) says so, and the processes that merely exited then are
// not listed as if they were candidates.
func TestOOMKillOutsideGroup(t *testing.T) {
	t0 := time.Date(2026, 12, 2, 3, 41, 0, 0, time.UTC)
	zero := 0
	group := "/sys/fs/cgroup/unified/s6trial"
	for _, c := range []struct {
		kill      correlate.OOMKill
		want, not string
	}{
		{correlate.OOMKill{Time: t0.Add(9 * time.Second), Count: 1, Group: group, InGroup: &zero, Exited: []string{"bash 28543", "hog 28520"},
			Victims: []correlate.OOMVictim{{PID: 28520, Comm: "hog", Cgroup: "/memdiag-mem-oom-23289", OOMCgroup: "/memdiag-mem-oom-23289", Constraint: "memcg", OutsideScope: true}}},
			"1 OOM kill: killed hog (PID 28520) in /memdiag-mem-oom-23289; outside the analysed group /sys/fs/cgroup/unified/s6trial", "bash 28543"},
		{correlate.OOMKill{Time: t0.Add(9 * time.Second), Count: 1, Group: group, InGroup: &zero, Exited: []string{"bash 28543", "hog 28520"}},
			"1 OOM kill outside the analysed group /sys/fs/cgroup/unified/s6trial (its oom_kill did not rise); the recording does not name the victim", "bash 28543"},
	} {
		r := correlate.Result{Host: "h", Start: t0, End: t0.Add(time.Minute), Interval: time.Second, Intervals: 60, Location: time.UTC,
			OOMKills: []correlate.OOMKill{c.kill}}
		var b bytes.Buffer
		if err := Render(&b, r, format.Table, Options{}); err != nil {
			t.Fatal(err)
		}
		out := b.String()
		if strings.Count(out, c.want) != 2 { // the timeline row and the OOM KILLS list
			t.Errorf("output has not twice %q:\n%s", c.want, out)
		}
		if strings.Contains(out, c.not) {
			t.Errorf("output lists %q, a process that merely exited then:\n%s", c.not, out)
		}
	}
}

// TestOOMExitedCapped: an OOM row of an interval in which 28 processes
// exited (the new-user trial's, issue 31 item 2: 240 columns) names the
// first three and counts the rest; the JSON keeps all 28.
func TestOOMExitedCapped(t *testing.T) {
	var ex []string
	for i := range 28 {
		ex = append(ex, fmt.Sprintf("sh %d", 31740+i))
	}
	k := correlate.OOMKill{Count: 1, Exited: ex}
	want := "1 OOM kill; the recording does not name the victim; exited then: sh 31740, sh 31741, sh 31742, 25 more (JSON: oom_kills[].exited)"
	if got := oomText(k); got != want {
		t.Errorf("oomText = %q\nwant %q", got, want)
	}
	if len(k.Exited) != 28 || k.Exited[3] != "sh 31743" {
		t.Errorf("oomText changed the kill's list: %v", k.Exited)
	}
}
