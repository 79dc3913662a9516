package confirm

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/memdiag/memdiag/timers"
)

// TestCheckDropIn: the section decides the unit; every refusal names the
// file and line.
func TestCheckDropIn(t *testing.T) {
	for _, c := range []struct {
		name, text, want string
	}{
		{"service", "[Service]\nIOSchedulingClass=idle\nMemoryHigh=200M\n", "Service"},
		{"timer", "# spread the firings\n[Timer]\nRandomizedDelaySec=10m\n", "Timer"},
		{"unit and timer", "[Unit]\nDescription=x\n[Timer]\nOnCalendar=\nOnCalendar=*:05/30\n", "Timer"},
		{"continued", "[Service]\nExecStart=/bin/sh -c \\\n  'true'\n", "Service"},
		{"crlf", "[Service]\r\nNice=19\r\n", "Service"},
		{"other section", "[Service]\nNice=19\n[Socket]\nListenStream=80\n", "fix.conf:3: [Socket]: a drop-in for a timer job takes [Service] (for its service) or [Timer] (for the timer), and [Unit]"},
		{"install", "[Install]\nWantedBy=timers.target\n", "fix.conf:1: [Install]: a drop-in"},
		{"both", "[Service]\nNice=19\n\n[Timer]\nAccuracySec=1s\n", "fix.conf:4: [Timer] after [Service] (line 1): one --with file goes to one unit"},
		{"unit only", "[Unit]\nDescription=x\n", "fix.conf: no [Service] or [Timer] section"},
		{"empty", "", "fix.conf: no [Service] or [Timer] section"},
		{"before a section", "Nice=19\n[Service]\n", `fix.conf:1: a setting before any [Section]: "Nice=19"`},
		{"no equals", "[Service]\nNice 19\n", `fix.conf:2: not a KEY=VALUE setting: "Nice 19"`},
		{"timer key under service", "[Service]\nMemoryHigh=200M\nRandomizedDelaySec=5m\n", "fix.conf:3: RandomizedDelaySec= is a [Timer] setting (systemd.timer(5)), not a [Service] one"},
		{"open header", "[Service\nNice=19\n", `fix.conf:1: section header without ']': "[Service"`},
	} {
		got, err := checkDropIn("fix.conf", []byte(c.text))
		if err != nil {
			got = err.Error()
		}
		if !strings.HasPrefix(got, c.want) {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

// dropInRoot is a root with /etc/systemd/system and pcp's two units, and
// a fake systemd that knows them.
func dropInRoot(t *testing.T) (Env, fakeUnits, *[]string) {
	t.Helper()
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, dropInDir), 0o755); err != nil {
		t.Fatal(err)
	}
	var calls []string
	fu := fakeUnits{active: map[string]bool{"pmlogger_check.timer": true, "pmlogger_check.service": false},
		calls: &calls, root: root, dropIns: map[string][]string{}}
	return Env{Root: root, Units: func(context.Context) (UnitControl, error) { return fu, nil }}, fu, &calls
}

func pcpTimerJob() timers.Job {
	return timers.Job{Name: "pmlogger_check.timer", Source: timers.Systemd, User: "pcp", Unit: "pmlogger_check.service",
		File: "usr/lib/systemd/system/pmlogger_check.timer"}
}

const serviceFix = "[Service]\nIOSchedulingClass=idle\nMemoryHigh=200M\n"

// TestDropInInstallAndRemove: a [Service] drop-in goes to the timer's
// service's folder, a [Timer] one to the timer's; each is written and
// systemd reloaded (and listing it) while held, and after Close the file,
// the folder memdiag made and the state are gone and systemd reloaded
// again.
func TestDropInInstallAndRemove(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		fix, unit string
	}{
		{serviceFix, "pmlogger_check.service"},
		{"[Timer]\nRandomizedDelaySec=10m\n", "pmlogger_check.timer"},
	} {
		env, fu, calls := dropInRoot(t)
		ch, err := PrepareFix(ctx, pcpTimerJob(), "/home/ops/fix.conf", []byte(c.fix), env, t0)
		if err != nil {
			t.Fatal(err)
		}
		dir := filepath.Join(env.Root, "etc/systemd/system", c.unit+".d")
		file := filepath.Join(dir, "50-memdiag-confirm.conf")
		if ch.Kind != KindDropIn || ch.Unit != c.unit || ch.File != file || ch.MadeDir != dir || ch.Content != c.fix {
			t.Fatalf("change %+v", ch)
		}
		if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("PrepareFix changed the host: %v", err)
		}
		state := filepath.Join(env.Root, "confirm.state")
		st, err := OpenState(state, env, t0)
		if err != nil {
			t.Fatal(err)
		}
		if err := st.Hold(ctx, ch); err != nil {
			t.Fatal(err)
		}
		if b, err := os.ReadFile(file); err != nil || string(b) != c.fix {
			t.Fatalf("drop-in while held: %q %v", b, err)
		}
		if fi, _ := os.Stat(file); fi.Mode().Perm() != 0o644 {
			t.Errorf("mode %v, want 0644", fi.Mode().Perm())
		}
		live := "/etc/systemd/system/" + c.unit + ".d/50-memdiag-confirm.conf"
		if diff := cmp.Diff([]string{live}, fu.dropIns[c.unit]); diff != "" {
			t.Errorf("systemd's DropInPaths while held (-want +got):\n%s", diff)
		}
		if b, _ := os.ReadFile(state); !strings.Contains(string(b), `"kind": "systemd-dropin"`) || !strings.Contains(string(b), `"made_dir": "`+dir+`"`) {
			t.Errorf("state while held:\n%s", b)
		}
		if err := st.Close(ctx); err != nil {
			t.Fatal(err)
		}
		for _, p := range []string{file, dir, state} {
			if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("%s left after close: %v", p, err)
			}
		}
		if len(fu.dropIns[c.unit]) != 0 {
			t.Errorf("systemd still lists %v", fu.dropIns[c.unit])
		}
		if diff := cmp.Diff([]string{"reload", "reload"}, *calls); diff != "" {
			t.Errorf("calls (-want +got):\n%s", diff)
		}
		if !fu.active["pmlogger_check.timer"] {
			t.Error("the timer was stopped")
		}
	}
}

// TestDropInKeepsOthers: a folder that was there stays, with the
// user's own drop-in in it, and a drop-in of memdiag's name already
// there is refused.
func TestDropInKeepsOthers(t *testing.T) {
	ctx := context.Background()
	env, _, _ := dropInRoot(t)
	dir := filepath.Join(env.Root, "etc/systemd/system/pmlogger_check.service.d")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	own := filepath.Join(dir, "override.conf")
	if err := os.WriteFile(own, []byte("[Service]\nNice=5\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ch, err := PrepareFix(ctx, pcpTimerJob(), "fix.conf", []byte(serviceFix), env, t0)
	if err != nil || ch.MadeDir != "" {
		t.Fatalf("%+v %v", ch, err)
	}
	st, err := OpenState(filepath.Join(env.Root, "s"), env, t0)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Hold(ctx, ch); err != nil {
		t.Fatal(err)
	}
	if _, err := PrepareFix(ctx, pcpTimerJob(), "fix.conf", []byte(serviceFix), env, t0); err == nil || !strings.Contains(err.Error(), "50-memdiag-confirm.conf: already there") {
		t.Errorf("a second prepare while installed: %v", err)
	}
	if err := st.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(own); err != nil || string(b) != "[Service]\nNice=5\n" {
		t.Errorf("the user's drop-in: %q %v", b, err)
	}
	if _, err := PrepareFix(ctx, timers.Job{Name: "gone.timer", Source: timers.Systemd}, "fix.conf", []byte(serviceFix), env, t0); err == nil || !strings.Contains(err.Error(), "gone.service: no such unit") {
		t.Errorf("a missing service: %v", err)
	}
	if _, err := PrepareFix(ctx, pcpTimerJob(), "fix.conf", []byte(serviceFix), Env{Root: env.Root}, t0); !errors.Is(err, ErrNoSystemd) {
		t.Errorf("no systemd: %v", err)
	}
}

// TestDropInRestoreAfterKill: `confirm --restore` after a run killed with
// the drop-in in place removes it and reloads systemd; after one killed
// between writing the state and the file, it only reloads; a drop-in
// edited since is left, with the state file, and said.
func TestDropInRestoreAfterKill(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		name     string
		apply    bool
		edit     bool
		wantErr  string
		wantLeft bool
	}{
		{name: "installed", apply: true},
		{name: "recorded but never made"},
		{name: "edited meanwhile", apply: true, edit: true, wantErr: "changed since memdiag wrote it; remove it by hand", wantLeft: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			env, fu, calls := dropInRoot(t)
			ch, err := PrepareFix(ctx, pcpTimerJob(), "fix.conf", []byte(serviceFix), env, t0)
			if err != nil {
				t.Fatal(err)
			}
			if c.apply {
				if err := Apply(ctx, ch, env); err != nil {
					t.Fatal(err)
				}
			}
			if c.edit {
				if err := os.WriteFile(ch.File, []byte("[Service]\nNice=1\n"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			state := filepath.Join(env.Root, "confirm.state")
			writeDeadState(t, state, ch)
			undone, err := Restore(ctx, state, env)
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("restore: %v, want %q", err, c.wantErr)
				}
				if _, serr := os.Stat(state); serr != nil {
					t.Errorf("state must stay: %v", serr)
				}
				if _, serr := os.Stat(ch.File); serr != nil {
					t.Errorf("the edited drop-in must stay: %v", serr)
				}
				return
			}
			if err != nil || len(undone) != 1 {
				t.Fatalf("restore: %v %v", undone, err)
			}
			for _, p := range []string{ch.File, ch.MadeDir, state} {
				if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
					t.Errorf("%s left: %v", p, err)
				}
			}
			if (*calls)[len(*calls)-1] != "reload" || len(fu.dropIns["pmlogger_check.service"]) != 0 {
				t.Errorf("systemd after restore: calls %v, DropInPaths %v", *calls, fu.dropIns["pmlogger_check.service"])
			}
		})
	}
}

// TestDropInOnlyInB: through an experiment, the drop-in is in place in
// B blocks only, and gone after the run.
func TestDropInOnlyInB(t *testing.T) {
	ctx := context.Background()
	env, fu, _ := dropInRoot(t)
	ch, err := PrepareFix(ctx, pcpTimerJob(), "fix.conf", []byte(serviceFix), env, t0)
	if err != nil {
		t.Fatal(err)
	}
	state := filepath.Join(env.Root, "confirm.state")
	st, err := OpenState(state, env, t0)
	if err != nil {
		t.Fatal(err)
	}
	blocks, _ := Plan(2)
	var seen []int
	e := &Experiment{Blocks: blocks, Changes: []Change{ch}, State: st, RunBlock: func(_ context.Context, b Block) (Measurement, error) {
		_, err := os.Stat(ch.File)
		if in := err == nil; in != (b.Arm == HeldOff) || in != (len(fu.dropIns["pmlogger_check.service"]) == 1) {
			t.Errorf("block %d (%s): drop-in there %v, systemd lists %v", b.Index, b.Arm, in, fu.dropIns["pmlogger_check.service"])
		}
		seen = append(seen, b.Index)
		return Measurement{Block: b}, nil
	}}
	if _, err := e.RunAndClose(ctx, state); err != nil || len(seen) != 4 {
		t.Fatalf("run: %v %v", seen, err)
	}
	for _, p := range []string{ch.File, state} {
		if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s left: %v", p, err)
		}
	}
}

// TestCronFix: the --with line replaces the job's line for B and the
// file comes back byte for byte (mode kept) after Close and after a
// killed run's Restore.
func TestCronFix(t *testing.T) {
	ctx := context.Background()
	const fix = "# try it in the idle I/O class\n" +
		`25,55  *  *  *  *  root  [ -z "$PCP_DIR" ] && nice -n19 ionice -c3 /usr/libexec/pcp/bin/pmlogger_check -C` + "\n"
	repl := strings.Split(fix, "\n")[1]
	for _, killed := range []bool{false, true} {
		root, file := cronRoot(t)
		env := Env{Root: root}
		c, err := PrepareFix(ctx, checkJob(), "/home/ops/fix.cron", []byte(fix), env, t0)
		if err != nil {
			t.Fatal(err)
		}
		if c.Kind != KindCron || c.Held != repl || c.Fix != "/home/ops/fix.cron" || c.Line != 8 {
			t.Fatalf("change %+v", c)
		}
		if want := "cron.d/pcp-pmlogger:8: line 8 of " + file + " replaced by the line of /home/ops/fix.cron: " + repl; c.Describe() != want {
			t.Errorf("Describe: %q, want %q", c.Describe(), want)
		}
		state := filepath.Join(root, "confirm.state")
		if killed {
			if err := Apply(ctx, c, env); err != nil {
				t.Fatal(err)
			}
			writeDeadState(t, state, c)
		} else {
			st, err := OpenState(state, env, t0)
			if err != nil {
				t.Fatal(err)
			}
			if err := st.Hold(ctx, c); err != nil {
				t.Fatal(err)
			}
			defer func() {
				if err := st.Close(ctx); err != nil {
					t.Fatal(err)
				}
				if b, _ := os.ReadFile(file); string(b) != pcpCron {
					t.Errorf("after close:\n%s", cmp.Diff(pcpCron, string(b)))
				}
			}()
		}
		b, _ := os.ReadFile(file)
		want := strings.Replace(pcpCron, c.Original, repl, 1)
		if string(b) != want {
			t.Fatalf("while in place:\n%s", cmp.Diff(want, string(b)))
		}
		if !hasJob(t, root, "cron.d/pcp-pmlogger:8") {
			t.Error("the replacement is no job for the inventory")
		}
		if killed {
			if _, err := Restore(ctx, state, env); err != nil {
				t.Fatal(err)
			}
			if b, _ := os.ReadFile(file); string(b) != pcpCron {
				t.Errorf("after restore:\n%s", cmp.Diff(pcpCron, string(b)))
			}
			if fi, _ := os.Stat(file); fi.Mode().Perm() != 0o640 {
				t.Errorf("mode %v, want 0640", fi.Mode().Perm())
			}
		}
	}
}

// TestCronFixRejects: each bad --with file for a cron job is refused
// with its file and line, before anything changes.
func TestCronFixRejects(t *testing.T) {
	orig := strings.Split(pcpCron, "\n")[7]
	for _, c := range []struct {
		fix, want string
	}{
		{"", "fix.cron: no crontab line to put in place of cron.d/pcp-pmlogger:8"},
		{"# only a comment\n\n", "fix.cron: no crontab line"},
		{"[Service]\nNice=19\n", "fix.cron:1: a unit section [Service], but cron.d/pcp-pmlogger:8 is a cron line"},
		{"* * * * * root a\n* * * * * root b\n", "fix.cron:2: a second line; for a cron job, --with takes the one crontab line that replaces line 8 of etc/cron.d/pcp-pmlogger (the first is line 1)"},
		{"# x\n*/5 * * * * nice-only\n", `fix.cron:2: malformed crontab line: too few fields (want time, user, command): "*/5 * * * * nice-only"`},
		{orig + "\n", "fix.cron:1: the same as line 8 of "},
	} {
		root, file := cronRoot(t)
		_, err := PrepareFix(context.Background(), checkJob(), "fix.cron", []byte(c.fix), Env{Root: root}, t0)
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%q: %v, want %q", c.fix, err, c.want)
		}
		if b, _ := os.ReadFile(file); string(b) != pcpCron {
			t.Errorf("%q: the crontab changed", c.fix)
		}
	}
	var ch *CannotHoldError
	if _, err := PrepareFix(context.Background(), timers.Job{Name: "anacron:cron.daily", Source: timers.Anacron}, "f", []byte("x"), Env{}, t0); !errors.As(err, &ch) {
		t.Errorf("anacron: %v", err)
	}
}

// TestDropInNotLoaded: a drop-in systemd does not list after the reload
// fails the B block, says so, and is removed again.
func TestDropInNotLoaded(t *testing.T) {
	ctx := context.Background()
	env, fu, _ := dropInRoot(t)
	ch, err := PrepareFix(ctx, pcpTimerJob(), "fix.conf", []byte(serviceFix), env, t0)
	if err != nil {
		t.Fatal(err)
	}
	delete(fu.active, "pmlogger_check.service") // the fake's Reload no longer reads its folder
	state := filepath.Join(env.Root, "confirm.state")
	st, err := OpenState(state, env, t0)
	if err != nil {
		t.Fatal(err)
	}
	blocks, _ := Plan(1)
	e := &Experiment{Blocks: blocks, Changes: []Change{ch}, State: st, RunBlock: func(_ context.Context, b Block) (Measurement, error) {
		return Measurement{Block: b}, nil
	}}
	done, err := e.RunAndClose(ctx, state)
	want := "block 2: putting fix.conf in place for pmlogger_check.timer: pmlogger_check.service: systemd did not load /etc/systemd/system/pmlogger_check.service.d/50-memdiag-confirm.conf after daemon-reload"
	if len(done) != 1 || err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Fatalf("%d blocks, %v; want %q", len(done), err, want)
	}
	for _, p := range []string{ch.File, ch.MadeDir, state} {
		if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s left: %v", p, err)
		}
	}
}
