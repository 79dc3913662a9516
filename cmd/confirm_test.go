package cmd

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/memdiag/memdiag/confirm"
	"github.com/memdiag/memdiag/internal/testutil"
)

func TestNewConfirmCmd(t *testing.T) {
	tests := []struct {
		name    string
		args    string
		want    confirmOptions
		wantErr string
	}{
		{
			name: "job and load",
			args: "--job pmlogger_check.timer --pairs 6 --block 20m --probe http://localhost:8080/ --yes -- k6 run load.js",
			want: confirmOptions{Request: confirm.Request{Jobs: []string{"pmlogger_check.timer"}, Pairs: 6, Block: 20 * time.Minute, Command: []string{"k6", "run", "load.js"}, MinEffect: 10},
				Probe: "http://localhost:8080/", Yes: true, ProbeInterval: 200 * time.Millisecond, State: "/var/lib/memdiag/confirm.state", Format: "table"},
		},
		{
			name: "recording, json, own state",
			args: "--recording run.jsonl --state /tmp/s --min-effect 5 --spike 1s -f json -- ./load.sh",
			want: confirmOptions{Request: confirm.Request{Recording: "run.jsonl", Pairs: 5, MinEffect: 5, Command: []string{"./load.sh"}},
				State: "/tmp/s", SpikeOver: time.Second, Format: "json", ProbeInterval: 200 * time.Millisecond},
		},
		{
			name: "restore",
			args: "--restore --state /tmp/s",
			want: confirmOptions{Request: confirm.Request{Restore: true, Pairs: 5, MinEffect: 10}, State: "/tmp/s", Format: "table", ProbeInterval: 200 * time.Millisecond},
		},
		{
			name: "with a fix",
			args: "--job pmlogger_check.timer --with fix.conf --yes -- ./load.sh",
			want: confirmOptions{Request: confirm.Request{Jobs: []string{"pmlogger_check.timer"}, With: "fix.conf", Pairs: 5, MinEffect: 10, Command: []string{"./load.sh"}},
				Yes: true, State: "/var/lib/memdiag/confirm.state", Format: "table", ProbeInterval: 200 * time.Millisecond},
		},
		{
			name: "two jobs together",
			args: "--job pmlogger_check.timer --job pmlogger_farm_check --yes -- ./load.sh",
			want: confirmOptions{Request: confirm.Request{Jobs: []string{"pmlogger_check.timer", "pmlogger_farm_check"}, Pairs: 5, MinEffect: 10, Command: []string{"./load.sh"}},
				Yes: true, State: "/var/lib/memdiag/confirm.state", Format: "table", ProbeInterval: 200 * time.Millisecond},
		},
		{name: "two jobs with a fix", args: "--job a --job b --with fix.conf -- ./load.sh", wantErr: "--with puts one job's fix in place: give it with one --job NAME"},
		{name: "restore with a fix", args: "--restore --with fix.conf", wantErr: "--restore takes no --with"},
		{name: "no culprit", args: "-- ./load.sh", wantErr: "give --job NAME (once per job held off together) or --recording FILE, not both"},
		{name: "both", args: "--job a --recording r -- ./load.sh", wantErr: "give --job NAME (once per job held off together) or --recording FILE, not both"},
		{name: "no load", args: "--job a", wantErr: "no load: give the load command after --"},
		{name: "load before --", args: "--job a ./load.sh", wantErr: "put the load command after --"},
		{name: "restore with a job", args: "--restore --job a", wantErr: "--restore takes no job"},
		{name: "pairs", args: "--job a --pairs 0 -- x", wantErr: "--pairs 0: want 1 to 1000"},
		{name: "min effect", args: "--job a --min-effect 120 -- x", wantErr: "--min-effect 120: want a percentage between 0 and 100"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ios, _, _, _ := iostreamsTest()
			f := &factory{IO: ios, Now: time.Now, Root: "/"}
			var got *confirmOptions
			c := newConfirmCmd(f, func(o *confirmOptions) error { got = o; return nil })
			err := execInRoot(f, c, append([]string{"confirm"}, strings.Fields(tc.args)...)...)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, *got, cmpopts.IgnoreFields(confirmOptions{}, "IO", "Now", "Root", "Location", "StdinTTY", "Units")); diff != "" {
				t.Errorf("options (-want +got):\n%s", diff)
			}
		})
	}
}

// confirmRoot is a fixture root with one cron line and a quiet
// /proc/pressure/memory (the same file at both ends of every block: no
// stall anywhere).
func confirmRoot(t *testing.T) (root, crontab string) {
	t.Helper()
	root = t.TempDir()
	crontab = filepath.Join(root, "etc/cron.d/decoy")
	for path, body := range map[string]string{
		crontab: "# a job that does nothing heavy\n*/2 * * * * root /bin/true\n",
		filepath.Join(root, "proc/pressure/memory"): "some avg10=0.00 avg60=0.00 avg300=0.00 total=1234\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=567\n",
	} {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root, crontab
}

func TestRunConfirmFixture(t *testing.T) {
	root, crontab := confirmRoot(t)
	before, _ := os.ReadFile(crontab)
	state := filepath.Join(t.TempDir(), "confirm.state")
	// Each block is one run of a load that checks, as cron would, whether
	// the job's line is there, and writes what it saw.
	seen := filepath.Join(t.TempDir(), "seen")
	// It also writes to its stdout: with -f json, that goes to stderr, and
	// stdout stays the report's alone.
	load := `if grep -q '^\*/2' "$1"; then echo A >>"$2"; else echo B >>"$2"; fi; echo the load says hello`
	code, out, errOut := runWith(t, time.Now, root, "confirm", "--job", "cron.d/decoy:2", "--pairs", "2", "--yes", "--state", state, "-f", "json",
		"--", "sh", "-c", load, "sh", crontab, seen)
	if code != exitOK {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	if b, _ := os.ReadFile(seen); string(b) != "A\nB\nB\nA\n" {
		t.Errorf("the load saw the job as %q, want A B B A", b)
	}
	if after, _ := os.ReadFile(crontab); string(after) != string(before) {
		t.Errorf("crontab after the run:\n%s", after)
	}
	if _, err := os.Stat(state); !os.IsNotExist(err) {
		t.Errorf("state file left: %v", err)
	}
	var rep struct {
		Job     string `json:"job"`
		HeldOff string `json:"held_off"`
		Result  struct {
			Metric  string   `json:"metric"`
			Verdict string   `json:"verdict"`
			Reasons []string `json:"reasons"`
		} `json:"result"`
		Blocks []struct{ Arm string } `json:"blocks"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	// No stall in either arm: the effect's interval is [0, 0], below the
	// half-point floor; but two pairs are too few to refute anything.
	if rep.Job != "cron.d/decoy:2" || rep.Result.Metric != "memory_some_stall_share" || rep.Result.Verdict != "inconclusive" || len(rep.Blocks) != 4 ||
		len(rep.Result.Reasons) == 0 || !strings.HasPrefix(rep.Result.Reasons[0], "2 pairs can neither confirm nor refute") {
		t.Errorf("report %+v", rep)
	}
	if strings.Count(errOut, "memdiag: block ") != 4 || strings.Count(errOut, "the load says hello\n") != 4 {
		t.Errorf("progress and the load's output:\n%s", errOut)
	}
}

// TestRunConfirmJobsTogether: --job twice holds both jobs off in every B
// block (the load sees neither line) and neither in A, puts both back,
// and the report names both.
func TestRunConfirmJobsTogether(t *testing.T) {
	root, crontab := confirmRoot(t)
	if err := os.WriteFile(crontab, []byte("# two jobs that do nothing heavy\n*/2 * * * * root /bin/true\n*/3 * * * * root /bin/false\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(crontab)
	state := filepath.Join(t.TempDir(), "confirm.state")
	seen := filepath.Join(t.TempDir(), "seen")
	load := `echo "$(grep -c '^\*/' "$1")" >>"$2"`
	code, out, errOut := runWith(t, time.Now, root, "confirm", "--job", "cron.d/decoy:2", "--job", "cron.d/decoy:3", "--pairs", "2", "--yes", "--state", state,
		"--", "sh", "-c", load, "sh", crontab, seen)
	if code != exitOK {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	if b, _ := os.ReadFile(seen); string(b) != "2\n0\n0\n2\n" {
		t.Errorf("the load saw %q lines of the jobs, want 2 0 0 2 (A B B A)", b)
	}
	if after, _ := os.ReadFile(crontab); string(after) != string(before) {
		t.Errorf("crontab after the run:\n%s", after)
	}
	for _, want := range []string{"Held off in B blocks, together:\n", "  - cron.d/decoy:2: line 2 of ", "  - cron.d/decoy:3: line 3 of "} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
}

// TestRunConfirmWith: with --with, B blocks run with the file's line in
// place of the job's (the load sees it), the crontab comes back byte for
// byte, and the report says what was in place and what the fix did.
func TestRunConfirmWith(t *testing.T) {
	root, crontab := confirmRoot(t)
	before, _ := os.ReadFile(crontab)
	dir := t.TempDir()
	fix := filepath.Join(dir, "fix.cron")
	if err := os.WriteFile(fix, []byte("# in the idle I/O class\n*/2 * * * * root ionice -c3 /bin/true\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	state, seen := filepath.Join(dir, "confirm.state"), filepath.Join(dir, "seen")
	load := `if grep -q '^\*/2 \* \* \* \* root ionice -c3 /bin/true$' "$1"; then echo B >>"$2"; elif grep -q '^\*/2 \* \* \* \* root /bin/true$' "$1"; then echo A >>"$2"; fi`
	code, out, errOut := runWith(t, time.Now, root, "confirm", "--job", "cron.d/decoy:2", "--with", fix, "--pairs", "5", "--yes", "--state", state,
		"--", "sh", "-c", load, "sh", crontab, seen)
	if code != exitOK {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	if b, _ := os.ReadFile(seen); string(b) != "A\nB\nB\nA\nA\nB\nB\nA\nA\nB\n" {
		t.Errorf("the load saw %q, want A B B A A B B A A B", b)
	}
	if after, _ := os.ReadFile(crontab); string(after) != string(before) {
		t.Errorf("crontab after the run:\n%s", after)
	}
	for _, want := range []string{
		"In place in B blocks: cron.d/decoy:2: line 2 of " + crontab + " replaced by the line of " + fix + ": */2 * * * * root ionice -c3 /bin/true\n",
		"│ B with fix │",
		// No stall in either arm, but each block is one instant run of
		// the load, far shorter than the 2 minutes between the job's
		// firings: an A block may hold no firing, so nothing is refuted.
		"Verdict: INCONCLUSIVE — inconclusive: cannot say whether the fix removed the effect\n",
		") was shorter than the time between the job's firings (2m0s), so an A block may have held no firing; give --block 2m0s or more",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
	code, _, errOut = runWith(t, time.Now, root, "confirm", "--job", "cron.d/decoy:2", "--with", filepath.Join(dir, "none"), "--yes", "--state", state, "--", "true")
	if code != exitError || !strings.Contains(errOut, "--with "+filepath.Join(dir, "none")+": no such file or directory") {
		t.Errorf("a missing --with file: exit %d\n%s", code, errOut)
	}
	if _, err := os.Stat(state); !os.IsNotExist(err) {
		t.Errorf("state file left: %v", err)
	}
}

// The load fails in the first B block (block 2): the run stops there
// with exit 4, and the line is back. Each block is one run of the load
// (--block 0), so where it fails does not depend on time: with --block
// 1s a load starved of CPU for a second (SCHED_IDLE beside a busy suite,
// as CI's fresh clone as nobody) was stopped at the block's end before
// its grep, and failed in block 3 instead.
func TestRunConfirmLoadFails(t *testing.T) {
	root, crontab := confirmRoot(t)
	before, _ := os.ReadFile(crontab)
	state := filepath.Join(t.TempDir(), "confirm.state")
	load := `if grep -q '^#memdiag-confirm-hold' "$1"; then exit 7; fi`
	code, _, errOut := runWith(t, time.Now, root, "confirm", "--job", "cron.d/decoy:2", "--pairs", "2", "--block", "0", "--yes", "--state", state,
		"--", "sh", "-c", load, "sh", crontab)
	if code != exitCommand || !strings.Contains(errOut, "memdiag: block 1/4 (A) done: ") || !strings.Contains(errOut, "block 2 (B): the load failed: exit code 7") ||
		!strings.Contains(errOut, "memdiag: stopped early; cron.d/decoy:2 back as it was\n") {
		t.Errorf("exit %d\n%s", code, errOut)
	}
	if after, _ := os.ReadFile(crontab); string(after) != string(before) {
		t.Errorf("crontab after the failed run:\n%s", after)
	}
}

// A --block shorter than the job's period is warned about before
// anything is asked or changed.
func TestRunConfirmWarnsShortBlock(t *testing.T) {
	root, crontab := confirmRoot(t)
	before, _ := os.ReadFile(crontab)
	state := filepath.Join(t.TempDir(), "confirm.state")
	code, _, errOut := runWith(t, time.Now, root, "confirm", "--job", "cron.d/decoy:2", "--pairs", "2", "--block", "1s", "--state", state, "--", "true")
	if code != exitUsage || !strings.Contains(errOut, "memdiag: warning: --block 1s is shorter than cron.d/decoy:2's period (2m0s): some A blocks may hold no firing\n") ||
		!strings.Contains(errOut, "stdin is not a terminal to ask, so give --yes") {
		t.Errorf("exit %d, want %d after the warning about the block's length\n%s", code, exitUsage, errOut)
	}
	if after, _ := os.ReadFile(crontab); string(after) != string(before) {
		t.Errorf("crontab changed:\n%s", after)
	}
}

// Jobs held off together: an A block sees a firing of any of them, so
// the warning is on the longest gap between their merged firings (two
// jobs every 2 minutes, one on even minutes, one on odd: one a minute).
func TestRunConfirmWarnsShortBlockJobsTogether(t *testing.T) {
	root, crontab := confirmRoot(t)
	if err := os.WriteFile(crontab, []byte("# two jobs\n*/2 * * * * root /bin/true\n1-59/2 * * * * root /bin/true\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ block, want string }{
		{"90s", ""},
		{"30s", "memdiag: warning: --block 30s is shorter than the longest gap between the held jobs' firings (1m0s): some A blocks may hold no firing\n"},
	} {
		_, _, errOut := runWith(t, time.Now, root, "confirm", "--job", "cron.d/decoy:2", "--job", "cron.d/decoy:3", "--pairs", "2", "--block", tc.block,
			"--state", filepath.Join(t.TempDir(), "confirm.state"), "--", "true")
		if got := strings.Contains(errOut, "warning: --block"); got != (tc.want != "") || (tc.want != "" && !strings.Contains(errOut, tc.want)) {
			t.Errorf("--block %s: stderr\n%s\nwant warning %q", tc.block, errOut, tc.want)
		}
	}
}

func TestRunConfirmAsks(t *testing.T) {
	root, crontab := confirmRoot(t)
	before, _ := os.ReadFile(crontab)
	for _, tc := range []struct {
		name    string
		tty     bool
		answer  string
		wantErr string
	}{
		{"not a terminal", false, "", "stdin is not a terminal to ask, so give --yes"},
		{"says no", true, "n\n", "nothing changed: you did not answer yes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ios, in, _, errOut := iostreamsTest()
			in.WriteString(tc.answer)
			state := filepath.Join(t.TempDir(), "s")
			o := &confirmOptions{IO: ios, Now: time.Now, Root: root, Location: time.UTC, State: state, StdinTTY: func() bool { return tc.tty },
				Request: confirm.Request{Jobs: []string{"cron.d/decoy:2"}, Command: []string{"true"}, Pairs: 1, MinEffect: 10}}
			err := runConfirm(context.Background(), o)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("err %v, want %q", err, tc.wantErr)
			}
			if tc.tty && !strings.Contains(errOut.String(), "line 2 of "+crontab+" commented out") {
				t.Errorf("prompt:\n%s", errOut)
			}
			if after, _ := os.ReadFile(crontab); string(after) != string(before) {
				t.Errorf("crontab changed:\n%s", after)
			}
			if _, err := os.Stat(state); !os.IsNotExist(err) {
				t.Errorf("state file left: %v", err)
			}
		})
	}
}

// TestConfirmPromptEndsOnCtrlC (issue 29): Ctrl-C (the context
// cancelled) while confirm waits at its prompt on a terminal nobody
// answers ends the wait with the interrupt, and nothing is changed.
// Before, the blocking read of stdin went on until a line was typed.
func TestConfirmPromptEndsOnCtrlC(t *testing.T) {
	root, crontab := confirmRoot(t)
	before, _ := os.ReadFile(crontab)
	for in, f := range testutil.SilentStdins(t) {
		t.Run(in, func(t *testing.T) {
			ios, _, _, errOut := iostreamsTest()
			ios.In = f
			o := &confirmOptions{IO: ios, Now: time.Now, Root: root, Location: time.UTC, State: filepath.Join(t.TempDir(), "s"), StdinTTY: func() bool { return true },
				Request: confirm.Request{Jobs: []string{"cron.d/decoy:2"}, Command: []string{"true"}, Pairs: 1, MinEffect: 10}}
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			ended := make(chan struct{})
			go func() { done <- runConfirm(ctx, o); close(ended) }()
			// Waiting at the prompt: seen, not assumed after a sleep (a
			// goroutine starved of CPU may not be there in 300 ms).
			testutil.WaitPollingOn(t, os.Getpid(), testutil.FdOf(t, f), 2*time.Minute, ended)
			cancel()
			select {
			case err := <-done:
				if !errors.Is(err, context.Canceled) {
					t.Errorf("err %v, want the interrupt; stderr %s", err, errOut)
				}
			case <-time.After(2 * time.Minute): // a hang bound, as in cancel_test.go
				t.Fatal("confirm still waiting at its prompt 2 min after Ctrl-C")
			}
			if after, _ := os.ReadFile(crontab); string(after) != string(before) {
				t.Errorf("crontab changed:\n%s", after)
			}
		})
	}
}

func TestConfirmRestore(t *testing.T) {
	root, crontab := confirmRoot(t)
	state := filepath.Join(t.TempDir(), "confirm.state")
	code, out, _ := runWith(t, time.Now, root, "confirm", "--restore", "--state", state)
	if code != exitOK || !strings.Contains(out, "Nothing to restore") {
		t.Errorf("no state: exit %d %q", code, out)
	}
	// What a run killed with SIGKILL during a B block leaves behind.
	held := "#memdiag-confirm-hold: */2 * * * * root /bin/true"
	if err := os.WriteFile(crontab, []byte("# a job that does nothing heavy\n"+held+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	doc := `{"version":1,"pid":1073741824,"pid_start_ticks":1,"began":"2026-12-06T12:00:00Z","changes":[{"kind":"cron","job":"cron.d/decoy:2","at":"2026-12-06T12:00:10Z",` +
		`"file":"` + crontab + `","line":2,"original":"*/2 * * * * root /bin/true","held":"` + held + `"}]}`
	if err := os.WriteFile(state, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	code, _, errOut := runWith(t, time.Now, root, "confirm", "--job", "cron.d/decoy:2", "--yes", "--state", state, "--", "true")
	if code != exitError || !strings.Contains(errOut, "run memdiag confirm --restore") {
		t.Errorf("a run over a killed run's state: exit %d\n%s", code, errOut)
	}
	code, out, errOut = runWith(t, time.Now, root, "confirm", "--restore", "--state", state)
	if code != exitOK || !strings.Contains(out, "Restored cron.d/decoy:2") {
		t.Fatalf("restore: exit %d\n%s%s", code, out, errOut)
	}
	if b, _ := os.ReadFile(crontab); string(b) != "# a job that does nothing heavy\n*/2 * * * * root /bin/true\n" {
		t.Errorf("crontab after restore:\n%s", b)
	}
}

// TestConfirmRedactsTheLoad: the load command in confirm's report goes
// through the one redaction policy, as every command line memdiag
// writes; --no-redact shows it as it is.
func TestConfirmRedactsTheLoad(t *testing.T) {
	root, _ := confirmRoot(t)
	for _, c := range []struct {
		flags []string
		want  string
		never string
	}{
		{nil, "Load: env API_TOKEN=*** true, ", "hunter2"},
		{[]string{"--no-redact"}, "Load: env API_TOKEN=hunter2 true, ", ""},
	} {
		state := filepath.Join(t.TempDir(), "confirm.state")
		args := append(append([]string{"confirm"}, c.flags...), "--job", "cron.d/decoy:2", "--pairs", "5", "--yes", "--state", state,
			"--", "env", "API_TOKEN=hunter2", "true")
		code, out, errOut := runWith(t, time.Now, root, args...)
		if code != exitOK {
			t.Fatalf("%v: exit %d\nstdout:\n%s\nstderr:\n%s", c.flags, code, out, errOut)
		}
		if !strings.Contains(out, c.want) || (c.never != "" && strings.Contains(out+errOut, c.never)) {
			t.Errorf("%v: want %q and never %q in:\n%s\n%s", c.flags, c.want, c.never, out, errOut)
		}
	}
}
