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
