package memreport

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/memdiag/memdiag/memview"
)

func TestRenderOOMSection(t *testing.T) {
	three := uint64(3)
	r := memview.Report{
		Time: time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC),
		OOM: memview.OOMReport{
			LogSource: "dmesg",
			Kills: []memview.OOMKill{{
				SinceBoot: 90 * time.Second, PID: 2915, Comm: "hog", AnonRSSBytes: 64360 << 10,
				Constraint: "memcg", OOMCgroup: "/docker/a", TaskCgroup: "/docker/a/b",
			}, {
				// A global OOM names the task's cgroup and no limit.
				SinceBoot: 95 * time.Second, PID: 846, Comm: "tail", Constraint: "global", TaskCgroup: "/user.slice",
			}},
			VMStatOOMKills: &three,
			CgroupOOMKills: []memview.CgroupCount{{Path: "/docker/a", Version: 2, OOMKills: 1}},
		},
	}
	for _, f := range []Format{Table, Markdown} {
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
		} {
			if !strings.Contains(s, want) {
				t.Errorf("%s output lacks %q:\n%s", f, want, s)
			}
		}
		if strings.Contains(s, "/user.slice (limit of") {
			t.Errorf("%s output gives the global OOM kill's cgroup a limit:\n%s", f, s)
		}
	}
	if _, err := ParseFormat("csv"); err == nil {
		t.Error("ParseFormat(csv) did not fail")
	}
}
