package cmd

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/memdiag/memdiag/internal/iostreams"
	"github.com/memdiag/memdiag/record"
	"github.com/memdiag/memdiag/session"
)

func TestNewGateCmd(t *testing.T) {
	tests := []struct {
		name    string
		args    string
		want    gateOptions
		wantErr string
	}{
		{
			name: "wrap a command",
			args: "--threshold memory.full.stall<1% -t oom_kills==0 --junit g.xml --cgroup /sys/fs/cgroup/unified/x -- ./load.sh --vus 50",
			want: gateOptions{Exprs: []string{"memory.full.stall<1%", "oom_kills==0"}, JUnit: "g.xml", Format: "table",
				Options: session.Options{Cgroup: "/sys/fs/cgroup/unified/x", Command: []string{"./load.sh", "--vus", "50"}, Interval: time.Second}},
		},
		{
			name: "duration from a file",
			args: "--thresholds t.yaml --duration 5m --interval 500ms --format github -o r.txt",
			want: gateOptions{ThresholdsFile: "t.yaml", Options: session.Options{Duration: 5 * time.Minute, Interval: 500 * time.Millisecond}, Format: "github", Output: "r.txt"},
		},
		{
			name: "recording",
			args: "-t memory.some.avg10<10 --recording run.jsonl -f json",
			want: gateOptions{Exprs: []string{"memory.some.avg10<10"}, Recording: "run.jsonl", Options: session.Options{Interval: time.Second}, Format: "json"},
		},
		{
			name: "duration in days",
			args: "-t oom_kills==0 --duration 1d",
			want: gateOptions{Exprs: []string{"oom_kills==0"}, Options: session.Options{Duration: 24 * time.Hour, Interval: time.Second}, Format: "table"},
		},
		{name: "no thresholds", args: "--duration 1s", wantErr: "no thresholds: give --threshold EXPR (e.g. 'memory.full.stall<1%') or --thresholds FILE"},
		{name: "no mode", args: "-t oom_kills==0", wantErr: "give exactly one of: a command after --, --duration, or --recording"},
		{name: "two modes", args: "-t oom_kills==0 --duration 1s -- true", wantErr: "give exactly one of: a command after --, --duration, or --recording"},
		{name: "command without dash", args: "-t oom_kills==0 true", wantErr: "put the command to wrap after --, e.g. memdiag gate --threshold 'memory.full.stall<1%' -- true"},
		{name: "bad format", args: "-t oom_kills==0 --duration 1s -f xml", wantErr: `--format "xml": unknown format; want one of table, json, markdown, github`},
		{name: "cgroup with recording", args: "-t oom_kills==0 --recording r --cgroup /x", wantErr: "--cgroup and --victim do not apply to --recording: a recording is judged in the scope it was made in"},
		{name: "victim with recording", args: "-t oom_kills==0 --recording r --victim 1", wantErr: "--cgroup and --victim do not apply to --recording: a recording is judged in the scope it was made in"},
		{name: "zero duration", args: "-t oom_kills==0 --duration 0s", wantErr: "--duration must be positive"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ios, _, _, _ := iostreams.Test()
			f := &factory{IO: ios, Now: time.Now, Root: "/"}
			var got *gateOptions
			cmd := newGateCmd(f, func(o *gateOptions) error { got = o; return nil })
			err := execInRoot(f, cmd, append([]string{"gate"}, strings.Fields(tt.args)...)...)
			if tt.wantErr != "" {
				var fe *usageError
				if !errors.As(err, &fe) || err.Error() != tt.wantErr {
					t.Fatalf("error = %v; want usageError %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tt.want.Mode == 0 {
				tt.want.Mode = 0o600 // --mode's default
			}
			if tt.want.ExitCode == "" {
				tt.want.ExitCode = "memdiag" // --exit-code's default
			}
			if diff := cmp.Diff(tt.want, *got, cmpopts.IgnoreFields(gateOptions{}, "IO", "Options.Now", "Options.Logger", "Options.Root", "Getenv", "Location")); diff != "" {
				t.Errorf("options (-want +got):\n%s", diff)
			}
		})
	}
}

var t0 = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

func u64(x uint64) *uint64 { return &x }

// writeRecording writes a recording of a cgroup whose memory "some" total
// grows 0, 100, 100, 400, 450 ms at 1 s samples (11.25 % over 4 s, worst
// 2..3 s at 30 %) and that swapped out 300 pages of 4 KiB.
func writeRecording(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "run.jsonl")
	w, err := record.Create(p, false)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.WriteHeader(&record.Header{Start: t0, Interval: time.Second, PageSize: 4096, Cgroup: "/sys/fs/cgroup/unified/web"}); err != nil {
		t.Fatal(err)
	}
	for i, us := range []int64{0, 100_000, 100_000, 400_000, 450_000} {
		l := record.PSILine{Total: time.Duration(us) * time.Microsecond}
		s := &record.Sample{Seq: i, Time: t0.Add(time.Duration(i) * time.Second),
			CgroupPSI:    &record.PSI{Memory: &record.PSIResource{Some: l, Full: &record.PSILine{}}},
			CgroupVMStat: &record.VMStat{Pswpout: u64(uint64(i) * 75), OOMKill: u64(0)}}
		if err := w.WriteSample(s); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close("duration"); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestRunGateRecording(t *testing.T) {
	rec := writeRecording(t)
	dir := t.TempDir()
	summary := filepath.Join(dir, "step-summary.md")
	if err := os.WriteFile(summary, []byte("earlier step\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ios, _, out, _ := iostreams.Test()
	opts := &gateOptions{
		IO: ios, Options: session.Options{Root: "/", Interval: time.Second}, Location: time.UTC, Format: "table",
		Getenv:    func(k string) string { return map[string]string{"GITHUB_STEP_SUMMARY": summary}[k] },
		Exprs:     []string{"memory.some.stall<5%", "memory.full.stall<1%", "swap.out<2MiB", "oom_kills==0"},
		Recording: rec, JUnit: filepath.Join(dir, "gate.xml"),
	}
	err := runGate(context.Background(), opts)
	var ce *exitCodeError
	if !errors.As(err, &ce) || ce.Code != exitBreach {
		t.Fatalf("runGate = %v; want exit %d", err, exitBreach)
	}
	if want := "threshold breached: memory.some.stall<5% (observed 11.25%)"; ce.Err.Error() != want {
		t.Errorf("error = %q; want %q", ce.Err, want)
	}
	golden(t, "gate-recording.table.txt", out.String())

	junit, err := os.ReadFile(opts.JUnit)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`<testsuites name="memdiag gate" tests="4" failures="1" errors="0" time="4.000">`,
		`<failure message="memory.some.stall&lt;5% breached: observed 11.25%" type="threshold breached">`,
	} {
		if !strings.Contains(string(junit), want) {
			t.Errorf("JUnit file lacks %s:\n%s", want, junit)
		}
	}
	md, err := os.ReadFile(summary)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(md), "earlier step\n### memdiag gate: FAIL: 1 of 4 thresholds breached\n") ||
		!strings.Contains(string(md), "| `memory.some.stall<5%` | 11.25% | ❌ **FAIL** | 12:00:02–12:00:03 (+2s) 30% |") {
		t.Errorf("step summary not appended as expected:\n%s", md)
	}
}

func TestRunGateRecordingPasses(t *testing.T) {
	ios, _, out, _ := iostreams.Test()
	opts := &gateOptions{IO: ios, Options: session.Options{Root: "/", Interval: time.Second}, Location: time.UTC, Format: "json",
		Getenv: func(string) string { return "" }, Exprs: []string{"memory.some.stall<12%", "swap.out<=1200KiB"}, Recording: writeRecording(t)}
	if err := runGate(context.Background(), opts); err != nil {
		t.Fatalf("runGate = %v; want a pass (11.25%% < 12%%, 300 pages = 1200 KiB)", err)
	}
	if !strings.Contains(out.String(), `"verdict": "pass"`) || !strings.Contains(out.String(), `"cgroup": "/sys/fs/cgroup/unified/web"`) {
		t.Errorf("json output:\n%s", out)
	}
}

// fixtureRoot builds a root with a static /proc/pressure/memory (its
// totals never move, so every stall share is 0) and the given extra files.
func fixtureRoot(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for p, c := range files {
		p = filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

const psiMemory = "some avg10=1.82 avg60=0.72 avg300=0.17 total=641648\nfull avg10=1.08 avg60=0.41 avg300=0.09 total=408339\n"

// run executes memdiag through execute, as Main does.
func run(t *testing.T, root string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	ios, _, out, errOut := iostreams.Test()
	f := &factory{IO: ios, Now: time.Now, Root: root}
	code = execute(context.Background(), f, args)
	return code, out.String(), errOut.String()
}

func TestGateExitCodes(t *testing.T) {
	t.Setenv("GITHUB_STEP_SUMMARY", "")
	calm := fixtureRoot(t, map[string]string{
		"proc/pressure/memory":     psiMemory,
		"proc/vmstat":              "pswpout 7\noom_kill 0\n",
		"cg/memory.pressure":       psiMemory,
		"cg/memory.events":         "oom_kill 0\n",
		"v1/cgroup.procs":          "",
		"v1/memory.limit_in_bytes": "67108864\n",
	})
	noPSI := fixtureRoot(t, map[string]string{"proc/vmstat": "pswpout 7\n"})
	tests := []struct {
		name       string
		root       string
		args       []string
		code       int
		stdout     []string // substrings
		stderrWant string   // substring
	}{
		{"calm host fixture passes", calm, []string{"gate", "-t", "memory.full.stall<1%", "-t", "swap.out==0", "--duration", "300ms", "--interval", "100ms"},
			exitOK, []string{"PASS: all 2 thresholds held", "scope: host"}, ""},
		{"calm cgroup fixture passes", calm, []string{"gate", "-t", "memory.some.stall<1%", "-t", "oom_kills==0", "--cgroup", "/cg", "--duration", "200ms", "--interval", "100ms"},
			exitOK, []string{"PASS: all 2 thresholds held", "scope: cgroup " + filepath.Join(calm, "cg")}, ""},
		{"no /proc/pressure", noPSI, []string{"gate", "-t", "memory.some.stall<1%", "--duration", "10s"},
			exitEnv, nil, `cannot judge memory.some.stall<1%: no memory PSI (/proc/pressure/memory, "some" line)`},
		{"no /proc/pressure names the kernel need", noPSI, []string{"gate", "-t", "memory.some.stall<1%", "--duration", "10s"},
			exitEnv, nil, "unavailable: pressure stall information (kernel >= 4.20 with CONFIG_PSI=y)"},
		{"cgroup v1 directory", calm, []string{"gate", "-t", "memory.some.stall<1%", "--cgroup", "/v1", "--duration", "10s"},
			exitEnv, nil, "per-cgroup PSI needs cgroup v2; this is a cgroup v1 directory"},
		{"cgroup without memory.stat for swap.out", calm, []string{"gate", "-t", "swap.out<1MiB", "--cgroup", "/cg", "--duration", "10s"},
			exitEnv, nil, "swap.out<1MiB: no pswpout counter for cgroup"},
		{"bad threshold is a usage error", calm, []string{"gate", "-t", "memory.full.stal<1%", "--duration", "1s"},
			exitUsage, nil, `unknown metric "memory.full.stal"`},
		{"command exits 3", calm, []string{"gate", "-t", "memory.full.stall<1%", "--", "sh", "-c", "echo from-child; exit 3"},
			exitCommand, []string{"from-child", "FAIL: the command failed: exited with code 3"}, "memdiag: the wrapped command failed: sh -c echo from-child; exit 3: exited with code 3"},
		{"command not found", calm, []string{"gate", "-t", "memory.full.stall<1%", "--", "/nonexistent/memdiag-gate-test"},
			exitCommand, nil, "could not start: fork/exec /nonexistent/memdiag-gate-test: no such file or directory"},
		{"command killed by a signal", calm, []string{"gate", "-t", "memory.full.stall<1%", "--", "sh", "-c", "kill -KILL $$"},
			exitCommand, nil, "killed by SIGKILL (exit code 137)"},
		// --exit-code command (issue 31 item 7): the command's own code
		// when no threshold failed; a breach still exits 3.
		{"--exit-code command passes the code through", calm, []string{"gate", "-t", "memory.full.stall<1%", "--exit-code", "command", "--", "sh", "-c", "exit 7"},
			7, []string{"command: sh -c exit 7: exited with code 7"}, "memdiag: the wrapped command exited with code 7 (--exit-code command)"},
		{"--exit-code command, the command succeeded", calm, []string{"gate", "-t", "memory.full.stall<1%", "--exit-code", "command", "--", "true"},
			exitOK, []string{"PASS: the threshold held"}, ""},
		{"--exit-code command, a breach wins", calm, []string{"gate", "-t", "oom_kills<0", "--exit-code", "command", "--", "sh", "-c", "exit 7"},
			exitBreach, nil, "memdiag: threshold breached: oom_kills<0 (observed 0)"},
		// --abort-on-fail (k6's abortOnFail): the first breach over the
		// run so far stops the command; the stop is not the command's
		// failure, so the breach's 3 is the code.
		{"--abort-on-fail stops the command", calm, []string{"gate", "-t", "oom_kills<0", "--abort-on-fail", "--interval", "100ms", "--", "sleep", "600"},
			exitBreach, []string{"command: sleep 600: stopped by memdiag (--abort-on-fail: oom_kills<0 crossed (observed 0)), exit code 143"},
			"memdiag: --abort-on-fail: oom_kills<0 crossed (observed 0); stopped the command"},
		{"--abort-on-fail without a breach lets the command end", calm, []string{"gate", "-t", "memory.full.stall<1%", "--abort-on-fail", "--interval", "100ms", "--", "sh", "-c", "sleep 0.3"},
			exitOK, []string{"command: sh -c sleep 0.3: exited with code 0"}, ""},
		{"--abort-on-fail needs a command", calm, []string{"gate", "-t", "oom_kills==0", "--abort-on-fail", "--duration", "1s"},
			exitUsage, nil, "--abort-on-fail and --exit-code apply to a command after -- only"},
		{"--exit-code takes memdiag or command", calm, []string{"gate", "-t", "oom_kills==0", "--exit-code", "child", "--", "true"},
			exitUsage, nil, `--exit-code "child": want memdiag or command`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// The sampled run's recording goes to the test's directory.
			args := append([]string{"gate", "--out", filepath.Join(t.TempDir(), "gate.jsonl")}, tt.args[1:]...)
			code, stdout, stderr := run(t, tt.root, args...)
			if code != tt.code {
				t.Errorf("exit code %d; want %d\nstdout:\n%s\nstderr:\n%s", code, tt.code, stdout, stderr)
			}
			for _, s := range tt.stdout {
				if !strings.Contains(stdout, s) {
					t.Errorf("stdout lacks %q:\n%s", s, stdout)
				}
			}
			if !strings.Contains(stderr, tt.stderrWant) {
				t.Errorf("stderr lacks %q:\n%s", tt.stderrWant, stderr)
			}
		})
	}
}

func TestGateHelpDocumentsExitCodes(t *testing.T) {
	code, stdout, _ := run(t, "/", "gate", "--help")
	if code != exitOK {
		t.Fatalf("--help exit %d", code)
	}
	for _, want := range []string{
		"  0  every threshold held",
		"  3  a threshold was breached",
		"  4  the wrapped command failed; its own exit code is printed",
		"  5  environment: a signal a threshold needs cannot be read",
		"memory.full.stall<1%     ... all non-idle tasks stalled at once",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("help lacks %q:\n%s", want, stdout)
		}
	}
}

func TestGateGitHubFormatAndThresholdsFile(t *testing.T) {
	t.Setenv("GITHUB_STEP_SUMMARY", "")
	root := fixtureRoot(t, map[string]string{
		"proc/pressure/memory": psiMemory,
		"proc/vmstat":          "pswpout 7\noom_kill 0\n",
		"t.yaml":               "thresholds:\n  - memory.full.stall<1%\n  - oom_kills==0\n",
		"bad.yaml":             "thresholds:\n  - memory.full.stall<1%\n  - oom_kills=0\n",
	})
	out := filepath.Join(root, "report.txt")
	code, stdout, stderr := run(t, root, "gate", "--out", "off", "--thresholds", filepath.Join(root, "t.yaml"), "--format", "github", "-o", out,
		"--duration", "200ms", "--interval", "100ms")
	if code != exitOK {
		t.Fatalf("exit %d; stderr:\n%s", code, stderr)
	}
	if stdout != "" {
		t.Errorf("stdout = %q; want the report in --output only", stdout)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	// A starved host may make a sample late or miss it: its gap is said
	// as a warning line before the verdict, the one other line allowed
	// ("1 sample more than half an interval late, 1 sample missed; …
	// starved of CPU or blocked", CI at 2912a1d beside the fresh clone).
	report := string(b)
	if line, rest, _ := strings.Cut(report, "\n"); strings.HasPrefix(line, "::warning title=memdiag gate%3A the recording lacks::") && strings.Contains(line, "starved of CPU") {
		report = rest
	}
	if want := "::notice title=memdiag gate::PASS: all 2 thresholds held (scope: host; "; !strings.HasPrefix(report, want) {
		t.Errorf("report = %q; want prefix %q", b, want)
	}

	code, _, stderr = run(t, root, "gate", "--out", "off", "--thresholds", filepath.Join(root, "bad.yaml"), "--duration", "1s")
	want := filepath.Join(root, "bad.yaml") + `:3: invalid threshold "oom_kills=0": bad operator "=0"`
	if code != exitUsage || !strings.Contains(stderr, want) {
		t.Errorf("bad file: exit %d, stderr %q; want %d and %q", code, stderr, exitUsage, want)
	}
}

func TestGateInterruptEndsTheCommand(t *testing.T) {
	root := fixtureRoot(t, map[string]string{"proc/pressure/memory": psiMemory, "proc/vmstat": "pswpout 7\n"})
	ctx, cancel := context.WithCancel(context.Background())
	ios, _, _, _ := iostreams.Test()
	f := &factory{IO: ios, Now: time.Now, Root: root}
	time.AfterFunc(300*time.Millisecond, cancel)
	// sleep gets SIGTERM from the gate and ends; Run returns only after.
	code := execute(ctx, f, []string{"gate", "--out", "off", "-t", "memory.full.stall<1%", "--interval", "100ms", "--", "sleep", "30"})
	if code != exitInterrupt {
		t.Errorf("exit %d; want %d", code, exitInterrupt)
	}
}

// A gate run's recording holds pressure and vmstat only: analyze of it
// says it can name no culprit and how to record one that can; analyze
// of watch's recording of the same root does not.
func TestAnalyzeOfGateRecordingSaysPressureOnly(t *testing.T) {
	root := fixtureRoot(t, map[string]string{
		"proc/pressure/memory": psiMemory,
		"proc/vmstat":          "pswpout 7\noom_kill 0\n",
	})
	dir := t.TempDir()
	gateRec, watchRec := filepath.Join(dir, "gate.jsonl"), filepath.Join(dir, "watch.jsonl")
	if code, _, stderr := run(t, root, "gate", "--out", gateRec, "-t", "oom_kills==0", "--duration", "300ms", "--interval", "100ms"); code != exitOK {
		t.Fatalf("gate: exit %d\n%s", code, stderr)
	}
	if code, _, stderr := run(t, root, "watch", "--out", watchRec, "--duration", "300ms", "--interval", "100ms", "--no-timers", "-q"); code != exitOK {
		t.Fatalf("watch: exit %d\n%s", code, stderr)
	}
	const want = "no processes, disks or process events recorded (pressure and vmstat only, as `memdiag gate` records)"
	for _, c := range []struct {
		rec  string
		says bool
	}{{gateRec, true}, {watchRec, false}} {
		code, out, stderr := run(t, root, "analyze", c.rec)
		if code != exitOK {
			t.Fatalf("analyze %s: exit %d\n%s", c.rec, code, stderr)
		}
		if strings.Contains(out, want) != c.says {
			t.Errorf("analyze %s: says %q: %v, want %v\n%s", filepath.Base(c.rec), want, !c.says, c.says, out)
		}
	}
}
