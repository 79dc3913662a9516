package cmd

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestNamedFilesBounded gives each command a file that never ends
// (/dev/zero) or a FIFO with no writer where it takes a file: analyze's
// recording and --latency, mem --kernel-log, gate --thresholds and watch
// --latency. Each run ends by itself, with its peak RSS under 200 MiB,
// and names the file. Before, analyze /dev/zero read until interrupted,
// mem --kernel-log of a large file died out of memory, analyze --latency
// FIFO ignored SIGINT and watch --latency /dev/zero spun past --duration.
func TestNamedFilesBounded(t *testing.T) {
	t.Parallel() // its own binaries and files: beside the others
	bin := buildJailBins(t)
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	rec := filepath.Join("..", "record", "testdata", "v1", "watch-6.18-cgroup.jsonl")
	for _, tc := range []struct {
		name string
		args func(f string) []string
	}{
		{"analyze", func(f string) []string { return []string{"analyze", f} }},
		{"analyze-latency", func(f string) []string { return []string{"analyze", "--latency", f, rec} }},
		{"mem-kernel-log", func(f string) []string { return []string{"mem", "--kernel-log", f} }},
		{"gate-thresholds", func(f string) []string { return []string{"gate", "--thresholds", f, "--recording", rec} }},
		{"watch-latency", func(f string) []string {
			return []string{"watch", "--latency", f, "--duration", "1s", "--interval", "200ms", "--no-timers", "-q", "--force", "--out", filepath.Join(t.TempDir(), "w.jsonl")}
		}},
	} {
		for _, f := range []string{"/dev/zero", fifo} {
			if f == fifo && !strings.Contains(tc.name, "latency") {
				// A FIFO with no writer waits for one until Ctrl-C
				// (TestAnalyzeEndsOnSignalWhileReading); --latency refuses it.
				continue
			}
			t.Run(tc.name+"/"+filepath.Base(f), func(t *testing.T) {
				out, rss := runJailed(t, bin, "/", false, tc.args(f)...)
				t.Logf("peak RSS %d MiB\n%s", rss>>20, out)
				if rss > 200<<20 {
					t.Errorf("peak RSS %d MiB, want under 200", rss>>20)
				}
				if f == "/dev/zero" && !strings.Contains(out, "/dev/zero") {
					t.Errorf("output does not name /dev/zero:\n%s", out)
				}
			})
		}
	}
	_ = os.Remove(fifo)
}
