package mem

import (
	"bytes"
	"encoding/csv"
	"errors"
	"strings"
	"testing"
	"time"

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
