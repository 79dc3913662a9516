package e2e

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

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
