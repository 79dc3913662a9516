package gatereport

import (
	"bytes"
	"encoding/json"
	"github.com/memdiag/memdiag/gate"
	"github.com/memdiag/memdiag/record"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memdiag/memdiag/internal/format"
	goldenfile "github.com/memdiag/memdiag/internal/golden"
)

// golden compares got with testdata/golden/name, or writes it under MEMDIAG_UPDATE_GOLDEN=1.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	goldenfile.Check(t, filepath.Join("testdata", "golden", name), string(got))
}

// goldenReport is a run with every outcome: a breach, a pass, a threshold
// that could not be judged, and a wrapped command.
func goldenReport(t *testing.T, exit int) *gate.Report {
	samples := host(
		step{Sec: 0, SomeUS: 0, FullUS: 0, Avg10: 0.5, Pswpout: u64(100), OOMKill: u64(0)},
		step{Sec: 1, SomeUS: 100_000, FullUS: 0, Avg10: 1.5, Pswpout: u64(200), OOMKill: u64(0)},
		step{Sec: 2, SomeUS: 100_000, FullUS: 50_000, Avg10: 3, Pswpout: u64(200), OOMKill: u64(1)},
		step{Sec: 3, SomeUS: 400_000, FullUS: 50_000, Avg10: 8.25, Pswpout: u64(300), OOMKill: u64(1)},
		step{Sec: 4, SomeUS: 450_000, FullUS: 50_000, Avg10: 7, Pswpout: u64(300), OOMKill: u64(1)},
	)
	rep := gate.Evaluate(nil, samples, gate.Scope{}, mustParse(t,
		"memory.some.stall<5%", "memory.full.stall<2%", "memory.some.avg10<10", "swap.out<64MiB", "oom_kills==0", "io.some.stall<10%"))
	rep.Command = &gate.CommandResult{Args: []string{"./load-test.sh", "--vus", "50"}, ExitCode: exit}
	return rep
}

func TestRenderGolden(t *testing.T) {
	// Times in a zone east of UTC, so a renderer that ignores Location shows.
	loc := time.FixedZone("CET", 3600)
	for _, f := range gate.Formats {
		t.Run(string(f), func(t *testing.T) {
			var b bytes.Buffer
			if err := Render(&b, goldenReport(t, 0), f, RenderOptions{Location: loc}); err != nil {
				t.Fatal(err)
			}
			ext := map[format.Format]string{format.Table: "txt", format.JSON: "json", format.Markdown: "md", format.GitHub: "txt"}[f]
			golden(t, "report-"+string(f)+"."+ext, b.Bytes())
		})
	}
}

func TestWriteJUnitGolden(t *testing.T) {
	var b bytes.Buffer
	if err := WriteJUnit(&b, goldenReport(t, 3), time.FixedZone("CET", 3600)); err != nil {
		t.Fatal(err)
	}
	golden(t, "junit.xml", b.Bytes())
}

func TestGitHubEscaping(t *testing.T) {
	if got, want := ghData("50% done\nnext"), "50%25 done%0Anext"; got != want {
		t.Errorf("ghData = %q; want %q", got, want)
	}
	if got, want := ghProperty("memdiag gate: a,b"), "memdiag gate%3A a%2Cb"; got != want {
		t.Errorf("ghProperty = %q; want %q", got, want)
	}
}

func TestFormatValue(t *testing.T) {
	tests := []struct {
		expr string
		v    float64
		want string
	}{
		{"memory.full.stall<1%", 11.254, "11.25%"},
		{"memory.full.total<500ms", 0.45, "450ms"},
		{"memory.full.total<2s", 0.45, "0.45s"},
		{"swap.out<64MiB", 819200, "0.78MiB"},
		{"swap.out==0", 819200, "800KiB"}, // a bare 0 picks a readable unit
		{"refault.file.rate<4MiB/s", 4096000, "3.91MiB/s"},
		{"refault.file.rate<500/s", 1000, "1000/s"},
		{"oom_kills==0", 2, "2"},
		{"memory.some.avg10<10", 12, "12%"},
	}
	for _, tt := range tests {
		th := mustParse(t, tt.expr)[0]
		if got := FormatValue(th, tt.v); got != tt.want {
			t.Errorf("FormatValue(%s, %g) = %q; want %q", tt.expr, tt.v, got, tt.want)
		}
	}
	if got := FormatValue(mustParse(t, "oom_kills==0")[0], nan()); !strings.Contains(got, "—") {
		t.Errorf("FormatValue(NaN) = %q; want a dash", got)
	}
}

func nan() float64 { var z float64; return z / z }

// TestRunLineCgroupScope: under --cgroup the run line names the group
// (gate's TestEvaluateCgroupScopeRefault judges the same run).
func TestRunLineCgroupScope(t *testing.T) {
	samples := host(step{Sec: 0, Refault: u64(0)}, step{Sec: 2, Refault: u64(2000)})
	samples[0].CgroupPSI, samples[1].CgroupPSI = psiSnap(step{}), psiSnap(step{})
	samples[0].CgroupVMStat = &record.VMStat{WorkingsetRefaultFile: u64(100)}
	samples[1].CgroupVMStat = &record.VMStat{WorkingsetRefaultFile: u64(120)}
	rep := gate.Evaluate(nil, samples, gate.Scope{Cgroup: "/sys/fs/cgroup/unified/mdtrial"}, mustParse(t, "refault.file.rate<500/s"))
	if got := runLine(rep, time.UTC); !strings.HasPrefix(got, "scope: cgroup /sys/fs/cgroup/unified/mdtrial;") {
		t.Errorf("run line %q", got)
	}
}

// TestRunLineCgroupLimit (issue 30.3): the run line and the JSON say the
// memory limit that bounds the judged group, its own or an ancestor's,
// since that limit is what a group's stall usually is; the host's run
// and a group without a known limit say nothing of one.
func TestRunLineCgroupLimit(t *testing.T) {
	samples := host(step{Sec: 0}, step{Sec: 2})
	for _, tc := range []struct {
		scope gate.Scope
		want  string
	}{
		{gate.Scope{Cgroup: "/sys/fs/cgroup/x.slice/web.service", Limit: "/x.slice", LimitBytes: 224 << 20},
			"scope: cgroup /sys/fs/cgroup/x.slice/web.service, memory limited to 224.0 MiB with every group under /x.slice; 2 samples"},
		{gate.Scope{Cgroup: "/sys/fs/cgroup/x.slice/web.service", Limit: "/x.slice/web.service", LimitBytes: 512 << 20},
			"scope: cgroup /sys/fs/cgroup/x.slice/web.service, memory limited to 512.0 MiB; 2 samples"},
		{gate.Scope{Cgroup: "/sys/fs/cgroup/x.slice/web.service"}, "scope: cgroup /sys/fs/cgroup/x.slice/web.service; 2 samples"},
		{gate.Scope{}, "scope: host; 2 samples"},
	} {
		rep := gate.Evaluate(nil, samples, tc.scope, mustParse(t, "memory.some.avg10<50%"))
		if got := runLine(rep, time.UTC); !strings.HasPrefix(got, tc.want) {
			t.Errorf("run line %q\nwant prefix %q", got, tc.want)
		}
		var b strings.Builder
		if err := renderJSON(&b, rep); err != nil {
			t.Fatal(err)
		}
		var doc struct {
			Limit string `json:"memory_limit_cgroup"`
			Bytes uint64 `json:"memory_limit_bytes"`
		}
		if err := json.Unmarshal([]byte(b.String()), &doc); err != nil {
			t.Fatal(err)
		}
		if doc.Limit != tc.scope.Limit || doc.Bytes != tc.scope.LimitBytes {
			t.Errorf("JSON limit %q %d, want %q %d", doc.Limit, doc.Bytes, tc.scope.Limit, tc.scope.LimitBytes)
		}
	}
}
