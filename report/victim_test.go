package report

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/memdiag/memdiag/correlate"
	"github.com/memdiag/memdiag/internal/format"
	"github.com/memdiag/memdiag/record"
)

func TestVictimLine(t *testing.T) {
	web := &record.Victim{PID: 4242, Comm: "websvc", How: record.VictimFromProbe,
		Detail: "127.0.0.1:8080 is a listening socket of websvc (pid 4242)",
		Cgroup: "/x.slice/web.service", CgroupDir: "/sys/fs/cgroup/unified/x.slice/web.service",
		Memcg: "/x.slice/web.service", MemcgDir: "/sys/fs/cgroup/memory/x.slice/web.service", MemcgVersion: 1, Limit: "/x.slice", LimitBytes: 224 << 20}
	root := &record.Victim{PID: 7, Comm: "websvc", How: record.VictimFromProbe, Detail: "127.0.0.1:8080 is a listening socket of websvc (pid 7)",
		Cgroup: "/", CgroupDir: "/sys/fs/cgroup/unified", Memcg: "/", MemcgDir: "/sys/fs/cgroup/memory", MemcgVersion: 1}
	unit := &record.Victim{How: record.VictimGiven, Detail: "given as --victim web.service", Unit: "web.service",
		Cgroup: "/x.slice/web.service", CgroupDir: "/sys/fs/cgroup/x.slice/web.service",
		Memcg: "/x.slice/web.service", MemcgDir: "/sys/fs/cgroup/x.slice/web.service", MemcgVersion: 2, Limit: "/x.slice/web.service", LimitBytes: 512 << 20}
	node := &record.Victim{PID: 4242, Comm: "websvc", How: record.VictimFromProbe,
		Detail: "127.0.0.1:8080 is a listening socket of websvc (pid 4242)",
		Cgroup: "/node.slice/x.slice/web.service", CgroupDir: "/sys/fs/cgroup/unified/node.slice/x.slice/web.service",
		Memcg: "/node.slice/x.slice/web.service", MemcgDir: "/sys/fs/cgroup/memory/node.slice/x.slice/web.service", MemcgVersion: 1,
		Limit: "/node.slice/x.slice", LimitBytes: 256 << 20, OuterLimits: []record.MemoryLimit{{Group: "/node.slice", Bytes: 288 << 20}}}
	for _, tc := range []struct {
		name string
		r    correlate.Result
		want string
	}{
		{"none recorded", correlate.Result{}, ""},
		{"probe, own group", correlate.Result{Victim: web, Cgroup: web.CgroupDir},
			"Victim: websvc (pid 4242), found from --probe: 127.0.0.1:8080 is a listening socket of websvc (pid 4242); scope: its cgroup /x.slice/web.service; memory: its v1 memory cgroup /x.slice/web.service, limited to 224.0 MiB with every group under /x.slice"},
		{"--cgroup wins", correlate.Result{Victim: web, Cgroup: "/sys/fs/cgroup/unified/other"},
			"Victim: websvc (pid 4242), found from --probe: 127.0.0.1:8080 is a listening socket of websvc (pid 4242); scope: --cgroup /sys/fs/cgroup/unified/other (given), not its own group; memory: its v1 memory cgroup /x.slice/web.service, limited to 224.0 MiB with every group under /x.slice"},
		{"root group", correlate.Result{Victim: root, VictimNote: "its cgroup v2 group is the root (/)"},
			"Victim: websvc (pid 7), found from --probe: 127.0.0.1:8080 is a listening socket of websvc (pid 7); scope: the host (its cgroup v2 group is the root (/))"},
		{"unit given", correlate.Result{Victim: unit, Cgroup: unit.CgroupDir},
			"Victim: web.service, given with --victim; scope: its cgroup /x.slice/web.service; memory: its memory cgroup /x.slice/web.service, limited to 512.0 MiB"},
		{"in a node", correlate.Result{Victim: node, Cgroup: node.CgroupDir},
			"Victim: websvc (pid 4242), found from --probe: 127.0.0.1:8080 is a listening socket of websvc (pid 4242); scope: its cgroup /node.slice/x.slice/web.service; memory: its v1 memory cgroup /node.slice/x.slice/web.service, limited to 256.0 MiB with every group under /node.slice/x.slice, and to 288.0 MiB with every group under /node.slice"},
		{"not found", correlate.Result{VictimNote: "not found from --probe: 10.0.0.1 is not an address of this host"},
			"Victim: not found (not found from --probe: 10.0.0.1 is not an address of this host)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := victimLine(&tc.r); got != tc.want {
				t.Errorf("got  %q\nwant %q", got, tc.want)
			}
		})
	}
}

func TestVictimJSON(t *testing.T) {
	v := &record.Victim{PID: 4242, Comm: "websvc", How: record.VictimFromProbe, Cgroup: "/w", CgroupDir: "/cg/w"}
	var b bytes.Buffer
	if err := Render(&b, correlate.Result{Victim: v, Cgroup: "/cg/w"}, format.JSON, Options{}); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Victim map[string]any `json:"victim"`
	}
	if err := json.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"found": true, "pid": 4242.0, "comm": "websvc", "how": "probe", "cgroup": "/w", "cgroup_dir": "/cg/w", "scope": "own_cgroup"}
	if diff := cmp.Diff(want, doc.Victim); diff != "" {
		t.Errorf("victim (-want +got):\n%s", diff)
	}
	b.Reset()
	if err := Render(&b, correlate.Result{}, format.JSON, Options{}); err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(b.Bytes(), []byte(`"victim"`)) {
		t.Error("a recording without a victim lookup has a victim object")
	}
}

// TestVictimHint: the advice to record a victim comes only for a host-
// scope recording without one whose verdict is weak (no culprit, or the
// best not of high confidence). Scraped metrics get none: fleet.txt,
// whose host has one episode and no victim, is TestRenderFleet's golden.
func TestVictimHint(t *testing.T) {
	ep := []correlate.Episode{{Index: 0}, {Index: 1}}
	medium := []correlate.Culprit{{Name: "pmlogger_check.timer", Confidence: 0.72}}
	high := []correlate.Culprit{{Name: "nightly-export.timer", Confidence: 0.81}}
	web := &record.Victim{Unit: "web.service", How: record.VictimGiven}
	for _, tc := range []struct {
		name string
		r    correlate.Result
		want bool
	}{
		{"no culprit", correlate.Result{Episodes: ep, PSIScope: correlate.PSIHost}, true},
		{"medium confidence", correlate.Result{Episodes: ep, Culprits: medium, PSIScope: correlate.PSIHost}, true},
		{"victim not found", correlate.Result{Episodes: ep, PSIScope: correlate.PSIHost, VictimNote: "not found from --probe"}, true},
		{"high confidence", correlate.Result{Episodes: ep, Culprits: high, PSIScope: correlate.PSIHost}, false},
		{"no episode", correlate.Result{PSIScope: correlate.PSIHost}, false},
		{"victim recorded", correlate.Result{Episodes: ep, Victim: web, PSIScope: correlate.PSIHost}, false},
		{"--cgroup recorded", correlate.Result{Episodes: ep, Cgroup: "/sys/fs/cgroup/web.slice", PSIScope: correlate.PSICgroup}, false},
	} {
		got := victimHint(&tc.r)
		if (got != "") != tc.want {
			t.Errorf("%s: hint %q, want one: %v", tc.name, got, tc.want)
		}
		var b bytes.Buffer
		if err := Render(&b, tc.r, format.Table, Options{}); err != nil {
			t.Fatal(err)
		}
		if has := bytes.Contains(b.Bytes(), []byte("--victim web.service")); has != tc.want {
			t.Errorf("%s: the report says how to give a victim: %v, want %v:\n%s", tc.name, has, tc.want, b.String())
		}
	}
}

// TestScopeLimitLine (issue 30.3): a --cgroup analysis says the memory
// limit that bounds the group when no victim line does: without a
// victim, or with a victim whose own group is not the scope. A victim
// whose group is the scope states the limit in its own line.
func TestScopeLimitLine(t *testing.T) {
	own := &record.Victim{How: record.VictimGiven, Unit: "web.service", Cgroup: "/x.slice/web.service",
		CgroupDir: "/sys/fs/cgroup/x.slice/web.service", Memcg: "/x.slice/web.service", MemcgDir: "/sys/fs/cgroup/x.slice/web.service",
		MemcgVersion: 2, Limit: "/x.slice", LimitBytes: 224 << 20}
	for _, tc := range []struct {
		name string
		r    correlate.Result
		want string
	}{
		{"no victim", correlate.Result{Cgroup: "/sys/fs/cgroup/tenant.slice/app.service", CgroupLimit: "/tenant.slice", CgroupLimitBytes: 1 << 30},
			"Scope: --cgroup /sys/fs/cgroup/tenant.slice/app.service, memory limited to 1.0 GiB with every group under /tenant.slice"},
		{"own limit", correlate.Result{Cgroup: "/sys/fs/cgroup/tenant.slice/app.service", CgroupLimit: "/tenant.slice/app.service", CgroupLimitBytes: 96 << 20},
			"Scope: --cgroup /sys/fs/cgroup/tenant.slice/app.service, memory limited to 96.0 MiB"},
		{"victim's own group", correlate.Result{Victim: own, Cgroup: own.CgroupDir, CgroupLimit: "/x.slice", CgroupLimitBytes: 224 << 20}, ""},
		{"no limit recorded", correlate.Result{Cgroup: "/sys/fs/cgroup/tenant.slice/app.service"}, ""},
		{"host", correlate.Result{}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := scopeLimitLine(&tc.r); got != tc.want {
				t.Errorf("got  %q\nwant %q", got, tc.want)
			}
		})
	}
}

// TestNoCulpritVictimReads: episodes whose only in-scope I/O was the
// victim's own reads (correlate.Result.VictimReads) say so, and where
// to look, under "No culprit".
func TestNoCulpritVictimReads(t *testing.T) {
	r := correlate.Result{Episodes: make([]correlate.Episode, 5), Period: &correlate.Period{Period: 11 * time.Second},
		VictimReads: &correlate.VictimReads{Program: "svc.py", Episodes: 4, Of: 5}}
	var b strings.Builder
	noCulpritText(&b, &r)
	want := "In 4 of the 5 episodes the I/O of the analysed scope was the victim's own reads (svc.py): most likely pages of its own that reclaim took, read back"
	if !strings.Contains(b.String(), want) || !strings.Contains(b.String(), "`--ebpf on`") {
		t.Errorf("no-culprit verdict lacks %q and the chain's advice:\n%s", want, b.String())
	}
	r.VictimReads = nil
	b.Reset()
	noCulpritText(&b, &r)
	if strings.Contains(b.String(), "victim") {
		t.Errorf("without victim reads: %s", b.String())
	}
}
