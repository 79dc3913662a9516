package confirm

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memdiag/memdiag/timers"
)

// FuzzCronRoundTrip checks that holding any line of any crontab off and
// putting it back gives the file back byte for byte, that a held file's
// only change is that line, and that a line memdiag refuses is refused
// with the file and line named.
func FuzzCronRoundTrip(f *testing.F) {
	f.Add(pcpCron, 8)
	f.Add("*/5 * * * * root true\n", 1)
	f.Add("a\r\nb\n\n", 2)
	f.Add("x\n#memdiag-confirm-hold: x\n", 2)
	f.Fuzz(func(t *testing.T, body string, line int) {
		root := t.TempDir()
		file := filepath.Join(root, "etc/cron.d/x")
		if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(file, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		env := Env{Root: root}
		c, err := Prepare(context.Background(), timers.Job{Name: "x", Source: timers.Cron, File: "etc/cron.d/x", Line: line}, env, t0)
		if err != nil {
			if line >= 1 && !strings.Contains(err.Error(), file) {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		if err := Apply(context.Background(), c, env); err != nil {
			t.Fatal(err)
		}
		held, _ := os.ReadFile(file)
		if string(held) == body || strings.Count(string(held), "\n") != strings.Count(body, "\n") {
			t.Fatalf("held file %q from %q", held, body)
		}
		if err := Undo(context.Background(), c, env); err != nil {
			t.Fatal(err)
		}
		if back, _ := os.ReadFile(file); string(back) != body {
			t.Fatalf("round trip: %q, want %q", back, body)
		}
	})
}

// FuzzReadState checks that no state file panics its reader and that a
// bad one is an error naming the file.
func FuzzReadState(f *testing.F) {
	f.Add(`{"version":1,"pid":5,"pid_start_ticks":1,"began":"2026-12-06T12:00:00Z","changes":[{"kind":"cron","file":"/etc/cron.d/x","line":2}]}`)
	f.Add(`{"version":2}`)
	f.Add(`{`)
	f.Fuzz(func(t *testing.T, text string) {
		path := filepath.Join(t.TempDir(), "confirm.state")
		if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := readState(path); err != nil && !strings.HasPrefix(err.Error(), path) {
			t.Fatalf("error does not name the file: %v", err)
		}
	})
}

// FuzzCheckDropIn checks that no --with file panics the drop-in check,
// that an accepted one goes to the service or the timer and has that
// section, and that a refused one names the file.
func FuzzCheckDropIn(f *testing.F) {
	f.Add(serviceFix)
	f.Add("[Unit]\n[Timer]\nOnCalendar=\nOnCalendar=*:05/30\n")
	f.Add("[Service]\nExecStart=/bin/sh -c \\\n[Timer]\n")
	f.Add("[Service]\r\n[Timer\n")
	f.Fuzz(func(t *testing.T, text string) {
		got, err := checkDropIn("fix.conf", []byte(text))
		if err != nil {
			if !strings.HasPrefix(err.Error(), "fix.conf") {
				t.Fatalf("error without the file: %v", err)
			}
			return
		}
		if (got != "Service" && got != "Timer") || !strings.Contains(text, "["+got+"]") {
			t.Fatalf("%q accepted for %q", text, got)
		}
	})
}

// FuzzCronFix checks that any --with file for a cron job is refused
// with its name, or puts in a line the inventory reads as a job and
// comes back out byte for byte.
func FuzzCronFix(f *testing.F) {
	f.Add("*/5 * * * * root nice -n19 true\n")
	f.Add("# c\n\n@daily root x\r\n")
	f.Add("[Service]\n")
	f.Fuzz(func(t *testing.T, fix string) {
		root, file := cronRoot(t)
		env := Env{Root: root}
		c, err := PrepareFix(context.Background(), checkJob(), "fix.cron", []byte(fix), env, t0)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "fix.cron") {
				t.Fatalf("error without the file: %v", err)
			}
			return
		}
		if err := timers.CheckCronLine("x", 1, c.Held, true); err != nil || strings.Contains(c.Held, "\n") {
			t.Fatalf("accepted %q: %v", c.Held, err)
		}
		if err := Apply(context.Background(), c, env); err != nil {
			t.Fatal(err)
		}
		if err := Undo(context.Background(), c, env); err != nil {
			t.Fatal(err)
		}
		if b, _ := os.ReadFile(file); string(b) != pcpCron {
			t.Fatalf("not restored byte for byte:\n%s", b)
		}
	})
}
