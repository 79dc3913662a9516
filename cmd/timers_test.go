package cmd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/jedib0t/go-pretty/v6/text"

	"github.com/memdiag/memdiag/internal/iostreams"
	"github.com/memdiag/memdiag/internal/usage"
	"github.com/memdiag/memdiag/timers"
)

func TestNewTimersCmd(t *testing.T) {
	tests := []struct {
		args    string
		want    timersOptions
		wantErr string
	}{
		{"", timersOptions{Next: 1, Format: "table", ListOptions: timers.ListOptions{Root: "/"}}, ""},
		{"--all --next 3 -f json", timersOptions{Next: 3, Format: "json", ListOptions: timers.ListOptions{All: true, Root: "/"}}, ""},
		{"--from 2026-11-29T12:00:00Z --to 2h --tz Europe/Berlin", timersOptions{Next: 1, Format: "table", ListOptions: timers.ListOptions{From: "2026-11-29T12:00:00Z", To: "2h", TZ: "Europe/Berlin", Root: "/"}}, ""},
		{"--base-time 2026-11-29T12:00:00Z --strict --format markdown --root /mnt", timersOptions{Next: 1, Format: "markdown", Strict: true, ListOptions: timers.ListOptions{BaseTime: "2026-11-29T12:00:00Z", Root: "/mnt"}}, ""},
		{"--user-units", timersOptions{Next: 1, Format: "table", ListOptions: timers.ListOptions{Users: true, Root: "/"}}, ""},
		{"--format yaml", timersOptions{}, `--format "yaml"`},
		{"--next 0", timersOptions{}, "--next 0"},
		{"--from 2026-11-29", timersOptions{}, `--from "2026-11-29" needs --to: the end of the window, such as 2d`},
		// --to alone is a window from now (README: timers --to 2d).
		{"--to 2d", timersOptions{Next: 1, Format: "table", ListOptions: timers.ListOptions{From: "now", To: "2d", Root: "/"}}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.args, func(t *testing.T) {
			ios, _, _, _ := iostreams.Test()
			f := &factory{IO: ios, Now: time.Now, Root: "/"}
			var got *timersOptions
			err := execInRoot(f, newTimersCmd(f, func(o *timersOptions) error { got = o; return nil }),
				append([]string{"timers"}, strings.Fields(tt.args)...)...)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, *got, cmpopts.IgnoreFields(timersOptions{}, "IO", "ListOptions.Now", "ListOptions.Live")); diff != "" {
				t.Errorf("options (-want +got):\n%s", diff)
			}
		})
	}
}

// runCLI runs memdiag with args against a fixture root and returns exit
// code, stdout and stderr.
func runCLI(t *testing.T, root string, args ...string) (int, string, string) {
	t.Helper()
	return runWith(t, func() time.Time { return time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC) }, "/", append([]string{"--root", root}, args...)...)
}

func timersRoot(name string) string { return filepath.Join("..", "testdata", "timers", name) }

// TestRunTimersGolden renders the Debian fixture in every format at a
// fixed base time and zone. The values in the goldens were checked by
// hand against the unit files (see timers/inventory_test.go).
func TestRunTimersGolden(t *testing.T) {
	base := []string{"timers", "--base-time", "2026-11-29T12:00:00Z", "--tz", "UTC"}
	tests := []struct {
		name string
		root string
		args []string
		code int
	}{
		{"timers-debian.table.txt", "debian", nil, 0},
		{"timers-debian.markdown.md", "debian", []string{"--format", "markdown"}, 0},
		{"timers-debian.json", "debian", []string{"--format", "json", "--next", "3"}, 0},
		{"timers-debian.csv", "debian", []string{"--format", "csv"}, 0},
		{"timers-debian-all.table.txt", "debian", []string{"--all"}, 0},
		{"timers-debian-window.table.txt", "debian", []string{"--from", "2026-11-29 12:00", "--to", "2026-11-29 13:00"}, 0},
		{"timers-debian-window.json", "debian", []string{"--from", "2026-11-30T00:00:00Z", "--to", "2026-11-30T08:00:00Z", "-f", "json"}, 0},
		{"timers-edge-all.table.txt", "edge", []string{"--all", "--tz", "Europe/Berlin"}, 0},
		{"timers-edge-strict.table.txt", "edge", []string{"--strict"}, exitError},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := runCLI(t, timersRoot(tt.root), append(append([]string{}, base...), tt.args...)...)
			if code != tt.code {
				t.Fatalf("exit code %d, want %d; stderr:\n%s", code, tt.code, errOut)
			}
			golden(t, tt.name, out)
		})
	}
}

// TestRunTimersStrict: problems are printed as file:line: reason, the
// listing still appears, and --strict turns them into exit code 1.
func TestRunTimersStrict(t *testing.T) {
	code, out, errOut := runCLI(t, timersRoot("edge"), "timers", "--base-time", "2026-11-29T12:00:00Z", "--tz", "UTC")
	if code != 0 {
		t.Fatalf("exit code %d without --strict; stderr:\n%s", code, errOut)
	}
	for _, want := range []string{
		"etc/cron.d/edge:7: malformed crontab line: end of range (61) above maximum (59): 61",
		`lib/systemd/system/edge-badcal.timer:2: OnCalendar=*-*-* 25:00: invalid calendar expression`,
		"edge-override.timer", // the rest is still listed
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q", want)
		}
	}
	code, _, errOut = runCLI(t, timersRoot("edge"), "timers", "--strict", "-f", "json")
	if code != exitError || !strings.Contains(errOut, "5 problems in periodic job definitions") {
		t.Errorf("--strict: exit code %d, stderr %q; want 1 and the problem count", code, errOut)
	}
	code, _, _ = runCLI(t, timersRoot("debian"), "timers", "--strict")
	if code != 0 {
		t.Errorf("--strict on the Debian fixture: exit code %d, want 0 (no problems)", code)
	}
}

// TestRunTimersJSONShape checks the fields the issue promises per job.
func TestRunTimersJSONShape(t *testing.T) {
	_, out, _ := runCLI(t, timersRoot("debian"), "timers", "--base-time", "2026-11-29T12:00:00Z", "--tz", "UTC", "-f", "json", "--next", "2")
	var doc struct {
		Jobs []map[string]any `json:"jobs"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, j := range doc.Jobs {
		for _, k := range []string{"name", "source", "schedule", "period_seconds", "next", "command", "errors"} {
			if _, ok := j[k]; !ok {
				t.Errorf("job %v lacks %q", j["name"], k)
			}
		}
		if j["name"] == "pmlogger_check.timer" {
			found = true
			want := map[string]any{
				"source": "systemd", "schedule": []any{"*-*-* *:25:00", "*-*-* *:55:00"}, "period_seconds": 1800.0,
				"next": []any{"2026-11-29T12:25:00Z", "2026-11-29T12:55:00Z"}, "errors": []any{},
			}
			for k, v := range want {
				if diff := cmp.Diff(v, j[k]); diff != "" {
					t.Errorf("pmlogger_check.timer %s (-want +got):\n%s", k, diff)
				}
			}
		}
		if j["name"] == "anacron.timer" && j["period_seconds"] != nil {
			t.Errorf("anacron.timer period_seconds = %v, want null (07..23:30 is irregular)", j["period_seconds"])
		}
	}
	if !found {
		t.Error("pmlogger_check.timer not listed")
	}
}

// TestRunTimersTerminalWidth: on a terminal the listing fits its width —
// a long SCHEDULE wraps, COMMAND and NOTE are cut with "…", and there
// are no lines between rows — while piped output (the goldens above)
// keeps every character.
func TestRunTimersTerminalWidth(t *testing.T) {
	for _, width := range []int{160, 200} {
		t.Run(fmt.Sprint(width), func(t *testing.T) {
			ios, _, out, errOut := iostreams.Test()
			ios.SetStdoutTTY(true)
			ios.SetWidth(width)
			f := &factory{IO: ios, Now: time.Now, Root: "/"}
			args := []string{"--root", timersRoot("debian"), "timers", "--base-time", "2026-11-29T12:00:00Z", "--tz", "UTC"}
			if code := execute(context.Background(), f, args); code != 0 {
				t.Fatalf("exit code %d; stderr:\n%s", code, errOut)
			}
			for i, l := range strings.Split(strings.TrimRight(out.String(), "\n"), "\n") {
				if n := text.StringWidthWithoutEscSequences(l); n > width {
					t.Errorf("line %d is %d columns wide, want <= %d: %q", i+1, n, width, l)
				}
				if strings.Contains(l, "┼") && i != 1 {
					t.Errorf("line %d separates rows: %q", i+1, l)
				}
			}
			// The longest command line, cut; its start is still there.
			if !strings.Contains(out.String(), "│ run-parts --report") || !strings.Contains(out.String(), "…") {
				t.Errorf("COMMAND not cut to fit:\n%s", out)
			}
			golden(t, fmt.Sprintf("timers-debian.tty%d.table.txt", width), out.String())
		})
	}
}

// fakeLive stands for the host's systemd manager.
type fakeLive map[string]timers.LiveTimer

func (f fakeLive) Timer(name string) (timers.LiveTimer, error) {
	if lt, ok := f[name]; ok {
		return lt, nil
	}
	return timers.LiveTimer{}, errors.New("not loaded")
}

// TestRunTimersLive: with a systemd manager, the listing gets a LAST
// column (and JSON last_trigger) from it; without one, one stderr line
// says so and the listing is the unit files'; with --root nothing is said.
func TestRunTimersLive(t *testing.T) {
	last := time.Date(2026, 11, 29, 11, 55, 3, 0, time.UTC)
	run := func(live func(context.Context, string) (timers.LiveSource, error), args ...string) (string, string) {
		t.Helper()
		ios, _, out, errOut := iostreams.Test()
		f := &factory{IO: ios, Now: time.Now, Root: timersRoot("debian")}
		err := execInRoot(f, newTimersCmd(f, func(o *timersOptions) error {
			o.Live = live
			return runTimers(context.Background(), o)
		}), append([]string{"timers", "--root", timersRoot("debian"), "--base-time", "2026-11-29T12:00:00Z", "--tz", "UTC"}, args...)...)
		if err != nil {
			t.Fatal(err)
		}
		return out.String(), errOut.String()
	}
	manager := func(context.Context, string) (timers.LiveSource, error) {
		return fakeLive{"pmlogger_check.timer": {LastTrigger: last}}, nil
	}
	out, errOut := run(manager)
	if errOut != "" {
		t.Errorf("stderr with a manager: %q", errOut)
	}
	lines := strings.Split(out, "\n")
	if !strings.Contains(lines[0], "│ NEXT (UTC)       │ LAST             │ COMMAND") {
		t.Errorf("header lacks LAST after NEXT: %q", lines[0])
	}
	found := false
	for _, l := range lines {
		if strings.HasPrefix(l, " pmlogger_check.timer ") {
			found = strings.Contains(l, "│ 2026-11-29 12:25 │ 2026-11-29 11:55 │ /usr/lib/pcp/bin/pmlogger_check")
		}
	}
	if !found {
		t.Errorf("pmlogger_check.timer row lacks NEXT 12:25 and LAST 11:55:\n%s", out)
	}
	out, _ = run(manager, "-f", "json")
	if !strings.Contains(out, `"last_trigger": "2026-11-29T11:55:03Z"`) {
		t.Errorf("JSON lacks last_trigger:\n%s", out)
	}

	down := func(context.Context, string) (timers.LiveSource, error) {
		return nil, &timers.UnavailableError{Need: timers.NotPID1}
	}
	out, errOut = run(down)
	if want := "memdiag: live timer state: systemd is not PID 1 here (no /run/systemd/system), so timers do not fire by themselves\n"; errOut != want {
		t.Errorf("stderr without a manager = %q, want %q", errOut, want)
	}
	if strings.Contains(out, "LAST") {
		t.Errorf("LAST column without live state:\n%s", out)
	}

	// The real probe with --root: files only, nothing to report.
	_, errOut = run(timers.ProbeLiveSource)
	if errOut != "" {
		t.Errorf("stderr with --root = %q, want none", errOut)
	}
}

// TestRunTimersToAlone: `timers --to 2h` lists the same firings as
// `--from now --to 2h`, not a usage error.
func TestRunTimersToAlone(t *testing.T) {
	base := []string{"timers", "--base-time", "2026-11-29T12:00:00Z", "--tz", "UTC"}
	code, alone, errOut := runCLI(t, timersRoot("debian"), append(base, "--to", "2h")...)
	if code != 0 {
		t.Fatalf("--to 2h: exit %d; stderr:\n%s", code, errOut)
	}
	_, both, _ := runCLI(t, timersRoot("debian"), append(base, "--from", "now", "--to", "2h")...)
	if alone != both || !strings.Contains(alone, "2026-11-29 12:10:00 │ sysstat-collect.timer") {
		t.Errorf("--to 2h:\n%s\nwant (--from now --to 2h):\n%s", alone, both)
	}
}

// TestTimersNextSecondsForFastTimers: a timer firing every 20 s lists
// its next firings to the second (12:00:20, 12:00:40, 12:01:00), not
// 12:00, 12:00, 12:01.
func TestTimersNextSecondsForFastTimers(t *testing.T) {
	root := t.TempDir()
	units := filepath.Join(root, "etc/systemd/system")
	if err := os.MkdirAll(filepath.Join(units, "timers.target.wants"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(root, "proc"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, text := range map[string]string{
		"fast.timer":   "[Timer]\nOnCalendar=*:*:0/20\n\n[Install]\nWantedBy=timers.target\n",
		"fast.service": "[Service]\nExecStart=/bin/true\n",
	} {
		if err := os.WriteFile(filepath.Join(units, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("../fast.timer", filepath.Join(units, "timers.target.wants/fast.timer")); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runCLI(t, root, "timers", "--base-time", "2026-11-29T12:00:05Z", "--tz", "UTC", "--next", "3")
	if code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, errOut)
	}
	for _, want := range []string{"│ 20s    │ 2026-11-29 12:00:20 │", "│ 2026-11-29 12:00:40 │", "│ 2026-11-29 12:01:00 │"} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in:\n%s", want, out)
		}
	}
}

// A wrong window is a usage error said alone: before, the host's live
// timer state was read first and its warning printed above the error
// (a new user's trial: `timers --to 8x` on a host without systemd).
func TestTimersBadWindowSaidFirst(t *testing.T) {
	ios, _, _, errOut := iostreams.Test()
	f := &factory{IO: ios, Now: time.Now, Root: timersRoot("debian")}
	err := execInRoot(f, newTimersCmd(f, func(o *timersOptions) error {
		o.Live = func(context.Context, string) (timers.LiveSource, error) {
			return nil, &timers.UnavailableError{Need: timers.NotPID1}
		}
		return runTimers(context.Background(), o)
	}), "timers", "--root", timersRoot("debian"), "--to", "8x")
	var ue *usage.Error
	if !errors.As(err, &ue) || !strings.HasPrefix(err.Error(), `--to "8x": want a time`) {
		t.Fatalf("err = %v, want the --to usage error", err)
	}
	if errOut.Len() > 0 {
		t.Errorf("said before the usage error: %q", errOut.String())
	}
}

// TestRunTimersFit80WithSeconds: at 80 columns the listing fits even
// when NEXT carries seconds (a timer of under a minute: 19 columns) next
// to a long name, schedule and command, which are cut to their floors
// (NEXT is never cut). It was 82 columns wide before the command's
// floor went from 16 to 14.
func TestRunTimersFit80WithSeconds(t *testing.T) {
	root := t.TempDir()
	sys := filepath.Join(root, "etc/systemd/system")
	name := "memdiag-width-check-every-ten-seconds"
	files := map[string]string{
		name + ".timer":   "[Timer]\nOnCalendar=*:*:0/10\nAccuracySec=1s\n\n[Install]\nWantedBy=timers.target\n",
		name + ".service": "[Service]\nType=oneshot\nExecStart=/usr/local/libexec/memdiag-width-check/a-long-program-name --with --many --options\n",
	}
	for f, body := range files {
		if err := os.MkdirAll(sys, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(sys, f), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(filepath.Join(sys, "timers.target.wants"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../"+name+".timer", filepath.Join(sys, "timers.target.wants", name+".timer")); err != nil {
		t.Fatal(err)
	}
	ios, _, out, errOut := iostreams.Test()
	ios.SetStdoutTTY(true)
	ios.SetWidth(80)
	f := &factory{IO: ios, Now: time.Now, Root: "/"}
	args := []string{"--root", root, "timers", "--base-time", "2026-11-29T12:00:03Z", "--tz", "UTC"}
	if code := execute(context.Background(), f, args); code != 0 {
		t.Fatalf("exit code %d; stderr:\n%s", code, errOut)
	}
	if !strings.Contains(out.String(), "2026-11-29 12:00:10") {
		t.Fatalf("NEXT without its seconds:\n%s", out)
	}
	for i, l := range strings.Split(strings.TrimRight(out.String(), "\n"), "\n") {
		if n := text.StringWidthWithoutEscSequences(l); n > 80 {
			t.Errorf("line %d is %d columns wide, want <= 80: %q", i+1, n, l)
		}
	}
}
