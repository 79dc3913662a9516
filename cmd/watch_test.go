package cmd

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/memdiag/memdiag/internal/fixtures"
	"github.com/memdiag/memdiag/internal/iostreams"
	"github.com/memdiag/memdiag/record"
	"github.com/memdiag/memdiag/session"
)

func TestNewWatchCmd(t *testing.T) {
	def := func(o watchOptions) watchOptions {
		o.ProbeEvery, o.Events, o.StallThreshold, o.StallWindow = 200*time.Millisecond, "auto", 100*time.Millisecond, time.Second
		if o.EBPF == "" {
			o.EBPF = "auto"
		}
		if o.Interval == 0 {
			o.Interval = time.Second
		}
		if o.TopN == 0 {
			o.TopN = 10
		}
		return o
	}
	tests := []struct {
		args    string
		want    watchOptions
		wantErr string
	}{
		{args: "", want: def(watchOptions{})},
		{args: "--interval 500ms --duration 1m --out r.jsonl --force --top 3 -q --cgroup /sys/fs/cgroup/x",
			want: def(watchOptions{Options: session.Options{Interval: 500 * time.Millisecond, Duration: time.Minute, TopN: 3, Cgroup: "/sys/fs/cgroup/x"}, Out: "r.jsonl", Force: true, Quiet: true})},
		{args: "--exec -- sleep 5", wantErr: "--exec was removed: the command after -- is always run, and the recording stops when it exits; drop --exec (memdiag watch -- CMD ARGS)"},
		{args: "-- ./load.sh -x", want: def(watchOptions{Options: session.Options{Command: []string{"./load.sh", "-x"}}})},
		{args: "--events off --stall-threshold 0 --enable-delayacct --keep-cmdline --all-devices",
			want: func() watchOptions {
				o := def(watchOptions{Options: session.Options{KeepCmdline: true, AllDevices: true, EnableDelayAcct: true}})
				o.Events, o.StallThreshold = "off", 0
				return o
			}()},
		{args: "--events sometimes", wantErr: `--events "sometimes": want auto, on or off`},
		{args: "--ebpf off", want: def(watchOptions{Options: session.Options{EBPF: "off"}})},
		{args: "--ebpf on", want: def(watchOptions{Options: session.Options{EBPF: "on"}})},
		{args: "--ebpf yes", wantErr: `--ebpf "yes": want auto, on or off`},
		{args: "--stall-window 100ms", wantErr: "--stall-window must be 500ms..10s"},
		{args: "--exec", wantErr: "--exec was removed"},
		{args: "sleep 5", wantErr: `unexpected argument "sleep"`},
		{args: "--interval 1ms", wantErr: `--interval "1ms": want a duration of at least 10ms`},
		{args: "--interval fast", wantErr: `--interval "fast": want a duration such as 500ms, 10s, 5m or 2h`},
		{args: "--duration 2d", want: def(watchOptions{Options: session.Options{Duration: 48 * time.Hour}})},
		{args: "--duration 1w12h", want: def(watchOptions{Options: session.Options{Duration: 180 * time.Hour}})},
		{args: "--duration 2x", wantErr: `--duration "2x": want a duration such as 90s, 30m, 2h, 2d or 1w`},
		{args: "--top -1", wantErr: "--top must not be negative"},
		// gate's "--out off" means no recording; watch refuses it rather
		// than writing a file named off.
		{args: "--out off", wantErr: "--out off: watch always records (its summary is analyzed from the recording); give a file name (./off for a file of that name)"},
		{args: "--out none", wantErr: "--out none: watch always records"},
		{args: "--out ./off", want: def(watchOptions{Out: "./off"})},
	}
	for _, tt := range tests {
		t.Run(tt.args, func(t *testing.T) {
			ios, _, _, _ := iostreams.Test()
			f := &factory{IO: ios, Now: time.Now, Root: "/"}
			var got *watchOptions
			err := execInRoot(f, newWatchCmd(f, func(_ context.Context, o *watchOptions) error { got = o; return nil }),
				append([]string{"watch"}, strings.Fields(tt.args)...)...)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				var fe *usageError
				if !errors.As(err, &fe) {
					t.Errorf("err %T is not a *usageError (no usage hint)", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got.F = nil
			if tt.want.Mode == 0 {
				tt.want.Mode = 0o600 // --mode's default
			}
			if diff := cmp.Diff(tt.want, *got); diff != "" {
				t.Errorf("options (-want +got):\n%s", diff)
			}
		})
	}
}

// runMemdiag runs a command line against a fixture root and returns the
// exit code, stdout and stderr.
func runMemdiag(t *testing.T, root string, args ...string) (int, string, string) {
	t.Helper()
	return runWith(t, time.Now, root, args...)
}

func TestRunWatchFixtureRoot(t *testing.T) {
	root := fixtures.Root(t, "linux-6.18")
	rec := filepath.Join(t.TempDir(), "r.jsonl")
	code, out, errOut := runMemdiag(t, root, "watch", "--interval", "20ms", "--duration", "150ms", "--out", rec, "--no-timers")
	if code != 0 {
		t.Fatalf("exit %d\nstderr: %s", code, errOut)
	}
	if !strings.Contains(errOut, "recording to "+rec) || !strings.Contains(errOut, "Recorded ") {
		t.Errorf("stderr lacks the start line or the summary:\n%s", errOut)
	}
	if !strings.HasPrefix(out, "TIME ") {
		t.Errorf("stdout does not start with the live header:\n%s", out)
	}
	r, err := record.ReadFile(rec)
	if err != nil {
		t.Fatal(err)
	}
	// 150 ms at 20 ms: 9 slots of the grid (0 to 160 ms), each a sample
	// or, when the sampler was starved of CPU (SCHED_IDLE beside a busy
	// suite, as CI's fresh clone as nobody), counted missed by the next
	// sample's gap.
	if n := gridSlots(r.Samples); len(r.Samples) == 0 || n != 9 {
		t.Fatalf("%d samples and missed (%d samples) in 150 ms at 20 ms, want 9", n, len(r.Samples))
	}
	s := r.Samples[0]
	// Values of testdata/linux-6.18/proc/pressure/memory and meminfo.
	if s.PSI == nil || s.PSI.Memory.Some.Total != 104492*time.Microsecond {
		t.Errorf("PSI memory some total = %v, want 104492µs", s.PSI)
	}
	if s.Meminfo == nil || s.Meminfo.ActiveFile == nil {
		t.Fatal("meminfo not recorded")
	}
	if r.Header.Root != root || r.End == nil || r.End.Reason != "duration" {
		t.Errorf("header root %q end %+v", r.Header.Root, r.End)
	}
}

func TestRunWatchNoPSI(t *testing.T) {
	root := fixtures.Root(t, "linux-6.18-nopsi")
	rec := filepath.Join(t.TempDir(), "r.jsonl")
	code, out, errOut := runMemdiag(t, root, "watch", "--interval", "20ms", "--duration", "100ms", "--out", rec, "--no-timers")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if n := strings.Count(errOut, "CONFIG_PSI"); n != 1 {
		t.Errorf("the missing-PSI warning appears %d times, want once:\n%s", n, errOut)
	}
	if !strings.Contains(errOut, "psi=0") {
		t.Errorf("warning does not name both causes:\n%s", errOut)
	}
	if !strings.Contains(out, "n/a") {
		t.Errorf("PSI columns not shown as n/a:\n%s", out)
	}
	r, err := record.ReadFile(rec)
	if err != nil {
		t.Fatal(err)
	}
	if r.Samples[0].PSI != nil || r.Samples[0].Meminfo == nil {
		t.Errorf("want no PSI but meminfo: %+v", r.Samples[0])
	}
	if c := r.Header.Collectors[0]; c.Name != "psi" || c.Available || c.Reason == "" {
		t.Errorf("header collector status = %+v", c)
	}
}

func TestRunWatchBadOutput(t *testing.T) {
	root := fixtures.Root(t, "linux-6.18")
	dir := t.TempDir()
	existing := filepath.Join(dir, "old.jsonl")
	if err := os.WriteFile(existing, []byte("precious"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runMemdiag(t, root, "watch", "--duration", "50ms", "--interval", "10ms", "--out", existing)
	if code == 0 || !strings.Contains(errOut, "--force") || out != "" {
		t.Errorf("existing --out: exit %d, stderr %q, stdout %q", code, errOut, out)
	}
	if b, _ := os.ReadFile(existing); string(b) != "precious" {
		t.Error("existing recording was overwritten")
	}
	code, out, errOut = runMemdiag(t, root, "watch", "--duration", "50ms", "--out", filepath.Join(dir, "missing", "r.jsonl"))
	if code == 0 || out != "" || !strings.Contains(errOut, "cannot record") {
		t.Errorf("unwritable --out: exit %d, stderr %q, stdout %q", code, errOut, out)
	}
}

func TestRunWatchCgroupV1(t *testing.T) {
	// A v1 memory cgroup directory has cgroup.procs but no *.pressure.
	root := fixtureRoot(t, map[string]string{
		"proc/pressure/memory":     psiMemory,
		"v1/cgroup.procs":          "",
		"v1/memory.limit_in_bytes": "67108864\n",
	})
	code, _, errOut := runMemdiag(t, root, "watch", "--duration", "50ms", "--cgroup", "/v1", "--out", filepath.Join(t.TempDir(), "r.jsonl"))
	if code != exitEnv || !strings.Contains(errOut, "cgroup v2") || !strings.Contains(errOut, filepath.Join(root, "v1")) {
		t.Errorf("v1 cgroup: exit %d, stderr %q; want %d and a cgroup v2 hint naming %s", code, errOut, exitEnv, filepath.Join(root, "v1"))
	}
}

// TestCgroupOneMeaning: --cgroup means the same directory to watch,
// record and gate (cgroupfs.Resolve): an absolute DIR is read under
// --root, a relative value is a group path below the cgroup2 mount.
func TestCgroupOneMeaning(t *testing.T) {
	root := fixtureRoot(t, map[string]string{
		"proc/pressure/memory":                  psiMemory,
		"proc/7/mountinfo":                      "35 24 0:30 / /sys/fs/cgroup/unified rw,nosuid,nodev,noexec,relatime shared:10 - cgroup2 cgroup2 rw,nsdelegate\n",
		"sys/fs/cgroup/unified/v1/cgroup.procs": "",
	})
	// procfs finds "self" by its link, as the kernel's is
	if err := os.Symlink("7", filepath.Join(root, "proc/self")); err != nil {
		t.Fatal(err)
	}
	want := filepath.Join(root, "sys/fs/cgroup/unified/v1")
	for _, cmd := range [][]string{
		{"watch", "--duration", "50ms", "--out", filepath.Join(t.TempDir(), "r.jsonl")},
		{"record", "--store", t.TempDir()},
		{"gate", "-t", "memory.some.stall<1%", "--duration", "50ms"},
	} {
		for _, v := range []string{"/sys/fs/cgroup/unified/v1", "v1", "/v1/../sys/fs/cgroup/unified/v1"} {
			code, _, errOut := runMemdiag(t, root, append(slices.Clone(cmd), "--cgroup", v)...)
			if code != exitEnv || !strings.Contains(errOut, want) {
				t.Errorf("%s --cgroup %s: exit %d, stderr %q; want %d naming %s", cmd[0], v, code, errOut, exitEnv, want)
			}
		}
	}
}

func TestRunWatchExecExitCode(t *testing.T) {
	rec := filepath.Join(t.TempDir(), "r.jsonl")
	code, _, errOut := runMemdiag(t, fixtures.Root(t, "linux-6.18"), "watch", "--interval", "20ms", "--out", rec, "--quiet", "--no-timers", "--", "sh", "-c", "sleep 0.1; exit 7", "x", "--password=hunter2")
	// One rule for watch and gate: a failed command is exit 4, its own
	// code printed.
	if code != exitCommand || !strings.Contains(errOut, "the wrapped command failed: sh: exit code 7") {
		t.Errorf("exit %d, want %d and the command's 7 named; stderr %s", code, exitCommand, errOut)
	}
	r, err := record.ReadFile(rec)
	if err != nil {
		t.Fatal(err)
	}
	if r.End == nil || !strings.Contains(r.End.Reason, "command exit code 7") {
		t.Errorf("end = %+v", r.End)
	}
	// Recordings are shared: the command's secrets are redacted.
	if c := strings.Join(r.Header.Command, " "); strings.Contains(c, "hunter2") || !strings.Contains(c, "--password=***") {
		t.Errorf("header command = %q, want the password redacted", c)
	}
}

// --duration ending a wrapped command stops it (SIGTERM) and says so: the
// command did not fail and was not "killed by interrupt"; watch exits 0.
func TestRunWatchDurationStopsCommand(t *testing.T) {
	rec := filepath.Join(t.TempDir(), "r.jsonl")
	code, _, errOut := runMemdiag(t, fixtures.Root(t, "linux-6.18"), "watch", "--interval", "20ms", "--duration", "100ms",
		"--out", rec, "--quiet", "--no-timers", "--events", "off", "--", "sleep", "30")
	if code != 0 {
		t.Errorf("exit %d, want 0; stderr %s", code, errOut)
	}
	r, err := record.ReadFile(rec)
	if err != nil {
		t.Fatal(err)
	}
	if want := "duration: command exit code 143 (memdiag sent SIGTERM: --duration was over)"; r.End == nil || r.End.Reason != want {
		t.Errorf("end = %+v, want reason %q", r.End, want)
	}
	// 100 ms at 20 ms: samples at 0..100 ms, then the final one after the
	// command was stopped; a slot a busy host missed is counted by the
	// next sample's gap.
	if n := gridSlots(r.Samples); n != 7 || r.End.Samples != len(r.Samples) {
		t.Errorf("%d samples and missed, end counts %d of %d; want 6 + the final one", n, r.End.Samples, len(r.Samples))
	}
}

// gridSlots is the samples of a recording plus those its gap lines say
// were due and missed: the grid's slots that --duration counts.
func gridSlots(ss []record.Sample) int {
	n := len(ss)
	for i := range ss {
		if ss[i].Gap != nil {
			n += ss[i].Gap.Missed
		}
	}
	return n
}

// The probe's requests after the last tick are in the final sample:
// watch --interval 1h records two samples while the command runs until
// the service has answered 5 requests, and the requests the service
// answered are counted (all but at most one cut short by the end of the
// run). The command waits for the answers, not a time: on a starved
// host 0.6 s once held only 3; and the interval is an hour, not 5 s, so
// that a run starved that long (SCHED_IDLE beside a busy suite, as CI's
// fresh clone as nobody) still has no tick between the two.
func TestRunWatchFinalSampleKeepsProbeRequests(t *testing.T) {
	var hits atomic.Int64
	answered := filepath.Join(t.TempDir(), "answered")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if hits.Add(1) == 5 {
			_ = os.WriteFile(answered, nil, 0o644)
		}
	}))
	defer srv.Close()
	rec := filepath.Join(t.TempDir(), "r.jsonl")
	code, _, errOut := runMemdiag(t, fixtures.Root(t, "linux-6.18"), "watch", "--interval", "1h", "--out", rec, "--quiet", "--no-timers",
		"--events", "off", "--probe", srv.URL, "--probe-interval", "100ms", "--", "sh", "-c", "until [ -e "+answered+" ]; do sleep 0.05; done")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	r, err := record.ReadFile(rec)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Samples) != 2 {
		t.Fatalf("%d samples, want 2 (start, final)", len(r.Samples))
	}
	n := 0
	for _, s := range r.Samples {
		if s.Latency != nil {
			n += s.Latency.Count
		}
	}
	if got := hits.Load(); n < 4 || int64(n) < got-1 || int64(n) > got {
		t.Errorf("%d requests recorded, the service answered %d; want all but at most the one in flight at the end (and at least 4: the command ran until the 5th was answered)", n, got)
	}
}

// A command that cannot start is a failed command (exit 4, as in gate),
// and no recording is left behind.
func TestRunWatchCommandCannotStart(t *testing.T) {
	rec := filepath.Join(t.TempDir(), "r.jsonl")
	code, _, errOut := runMemdiag(t, fixtures.Root(t, "linux-6.18"), "watch", "--interval", "20ms", "--out", rec, "--quiet", "--no-timers",
		"--events", "off", "--", "/nonexistent/memdiag-watch-test")
	if code != exitCommand || !strings.Contains(errOut, "the wrapped command failed: could not start: fork/exec /nonexistent/memdiag-watch-test: no such file or directory") {
		t.Errorf("exit %d, stderr %s; want %d and why", code, errOut, exitCommand)
	}
	if _, err := os.Stat(rec); !os.IsNotExist(err) {
		t.Errorf("recording left behind: %v", err)
	}
}

// TestWatchCommandGetsTheStreams: the command after -- writes to
// memdiag's stdout and stderr and reads its stdin (the test streams
// here), rather than to nowhere.
func TestWatchCommandGetsTheStreams(t *testing.T) {
	ios, in, out, errOut := iostreams.Test()
	in.WriteString("from-stdin\n")
	f := &factory{IO: ios, Now: time.Now, Root: fixtures.Root(t, "linux-6.18")}
	rec := filepath.Join(t.TempDir(), "r.jsonl")
	code := execute(context.Background(), f, []string{"watch", "--interval", "20ms", "-q", "--out", rec, "--no-timers", "--events", "off",
		"--", "sh", "-c", "read line; echo \"out:$line\"; echo err-marker >&2"})
	if code != 0 {
		t.Fatalf("exit %d\nstderr: %s", code, errOut)
	}
	if !strings.Contains(out.String(), "out:from-stdin") || !strings.Contains(errOut.String(), "err-marker") {
		t.Errorf("stdout %q, stderr %q; want the command's out:from-stdin and err-marker", out, errOut)
	}
}
