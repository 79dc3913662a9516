package cmd

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestPerProcessFaultsSaid (issue 29): under --root, a per-process file
// that is there but unusable — a FIFO at proc/1/stat, a malformed
// proc/1/status or proc/1/io — is said once as a warning naming the file
// (and line), and the command goes on: mem lists what it can, with the
// warning in its report, and exits 0; watch warns on stderr and records
// its samples with the fault counted and named in each one.
// Before, mem failed (exit 1) on the status and said nothing of the
// FIFO, and watch's scanner skipped the io without a word.
func TestPerProcessFaultsSaid(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, file, text string // text "": a FIFO
		args             []string
		want             string
	}{
		{"mem, FIFO stat", "proc/1/stat", "", []string{"mem", "--interval", "0"}, "proc/1/stat: not a regular file (a FIFO)"},
		{"mem, malformed status", "proc/1/status", "Name:\tinit\nVmRSS:\tlots kB\n", []string{"mem", "--interval", "0"}, `proc/1/status:2: malformed line: VmRSS: "lots kB"`},
		{"watch, malformed io", "proc/1/io", "rchar: 1\nread_bytes: x\nwrite_bytes: 0\ncancelled_write_bytes: 0\n",
			[]string{"watch", "--duration", "1s", "--interval", "500ms", "--no-timers", "-q", "--force"}, `proc/1/io:2: malformed line: read_bytes "x"`},
		{"watch, FIFO stat", "proc/1/stat", "", []string{"watch", "--duration", "1s", "--interval", "500ms", "--no-timers", "-q", "--force"}, "proc/1/stat: not a regular file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := procJailRoot(t)
			f := filepath.Join(root, tc.file)
			os.Remove(f)
			var err error
			if tc.text == "" {
				err = syscall.Mkfifo(f, 0o600)
			} else {
				err = os.WriteFile(f, []byte(tc.text), 0o644)
			}
			if err != nil {
				t.Fatal(err)
			}
			args := append([]string{}, tc.args...)
			out := filepath.Join(t.TempDir(), "w.jsonl")
			if args[0] == "watch" {
				args = append(args, "--out", out)
			}
			args = append(args, "--root", root)
			code, stdout, stderr := runWith(t, time.Now, "/", args...)
			if code != exitOK {
				t.Fatalf("exit %d, want 0: one bad process stops nothing\n%s%s", code, stdout, stderr)
			}
			said := stderr // watch warns on stderr; mem's report holds its warnings
			if args[0] == "mem" {
				said = stdout
			}
			if n := strings.Count(said, tc.want); n != 1 {
				t.Errorf("output names %q %d times, want once:\n%s", tc.want, n, said)
			}
			if !strings.Contains(said, "1 per-process file left out") {
				t.Errorf("output does not count the fault:\n%s", said)
			}
			switch args[0] {
			case "mem":
				if tc.file == "proc/1/stat" && !strings.Contains(stdout, " init ") {
					t.Errorf("PID 1 not listed with only its stat unusable:\n%s", stdout)
				}
			case "watch":
				rec, err := os.ReadFile(out)
				if err != nil {
					t.Fatal(err)
				}
				if !strings.Contains(string(rec), `"failed":1`) || !strings.Contains(string(rec), strings.ReplaceAll(tc.want, `"`, `\"`)) {
					t.Errorf("the recording's samples do not count and name the fault:\n%s", rec)
				}
			}
		})
	}
}
