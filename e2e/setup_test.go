package e2e

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memdiag/memdiag/internal/testenv"
)

// unitDir is where the tests install their timer and service units, as
// an administrator would; each test removes what it wrote.
const unitDir = "/etc/systemd/system"

// writeUnits writes unit files (name → body) into /etc/systemd/system and
// enables each .timer as `systemctl enable` does; all is removed after
// the test.
func writeUnits(t *testing.T, files map[string]string) {
	t.Helper()
	wants := filepath.Join(unitDir, "timers.target.wants")
	if err := os.MkdirAll(wants, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, body := range files {
		p := filepath.Join(unitDir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.Remove(p) })
		if strings.HasSuffix(name, ".timer") {
			l := filepath.Join(wants, name)
			os.Remove(l)
			if err := os.Symlink(p, l); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { os.Remove(l) })
		}
	}
}

// startWebsvc starts srv, a command of internal/testenv/websvc, kills it
// when the test ends, and returns the URL it serves (the address it
// prints on its first line of standard output).
func startWebsvc(t *testing.T, srv *exec.Cmd) string {
	t.Helper()
	stdout, err := srv.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	srv.Stderr = os.Stderr
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Process.Kill(); srv.Wait() })
	addr, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatalf("websvc did not start: %v", err)
	}
	return "http://" + strings.TrimSpace(addr) + "/"
}

// firings asks systemd-analyze (the oracle, independent of memdiag's own
// calendar code) for the next n elapses of expr after base.
func firings(t *testing.T, expr string, base time.Time, n int) []time.Time {
	t.Helper()
	out, err := exec.Command("systemd-analyze", "calendar", "--iterations="+fmt.Sprint(n),
		"--base-time=@"+fmt.Sprint(base.Unix()), expr).Output()
	if err != nil {
		testenv.Unmet(t, "systemd-analyze calendar: "+err.Error())
	}
	var ts []time.Time
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		k, v, ok := strings.Cut(line, ":")
		if !ok || !(strings.HasPrefix(k, "Next elapse") || strings.HasPrefix(k, "Iter.")) {
			continue
		}
		v = strings.TrimSpace(v)
		// "Sun 2026-11-29 22:10:20 UTC"
		f := strings.Fields(v)
		if len(f) < 4 {
			continue
		}
		tm, err := time.ParseInLocation("2006-01-02 15:04:05", f[1]+" "+f[2], time.Local)
		if err != nil {
			t.Fatalf("systemd-analyze output %q: %v", line, err)
		}
		ts = append(ts, tm)
	}
	return ts
}

// culprits is the list of culprits of analyze's JSON, decoded loosely.
func culprits(res map[string]any) []map[string]any {
	var cs []map[string]any
	if l, ok := res["culprits"].([]any); ok {
		for _, c := range l {
			if m, ok := c.(map[string]any); ok {
				cs = append(cs, m)
			}
		}
	}
	return cs
}
