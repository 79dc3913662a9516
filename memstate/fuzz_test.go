package memstate

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// FuzzParseKernelLog checks that no kernel log (dmesg, /dev/kmsg,
// journalctl -k) panics the OOM parser and that every kill it reports has
// a PID and the victim's name from the log.
func FuzzParseKernelLog(f *testing.F) {
	for _, g := range []string{"testdata/oom/*.txt", "testdata/oom/*.kmsg", "testdata/oom/public/*.txt", "testdata/*/dev/kmsg"} {
		ms, _ := filepath.Glob(g)
		for _, m := range ms {
			b, err := os.ReadFile(m)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(b)
		}
	}
	boot := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, b []byte) {
		kills, err := ParseKernelLog(bytes.NewReader(b), "kmsg", boot)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "kmsg") {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		for _, k := range kills {
			if k.PID <= 0 {
				t.Fatalf("kill with PID %d: %+v", k.PID, k)
			}
			if k.Cause == "" || k.PageSizeBytes == 0 {
				t.Fatalf("kill without a cause or page size: %+v", k)
			}
			victims := 0
			for _, task := range k.Tasks {
				if task.Victim {
					victims++
				}
			}
			if victims > 1 {
				t.Fatalf("%d victims in one report: %+v", victims, k.Tasks)
			}
		}
	})
}

// FuzzParseKV checks cgroup memory.stat / memory.events style files.
func FuzzParseKV(f *testing.F) {
	f.Add([]byte("anon 1024\nfile 2048\n"))
	f.Add([]byte("low 0\nhigh 3\nmax 18446744073709551615\noom 1\noom_kill 1\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		if _, err := parseKV(bytes.NewReader(b), "memory.stat"); err != nil && !strings.HasPrefix(err.Error(), "memory.stat") {
			t.Fatalf("error does not name the file: %v", err)
		}
	})
}
