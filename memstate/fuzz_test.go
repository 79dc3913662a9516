package memstate

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/memdiag/memdiag/internal/testutil"
)

// FuzzParseKernelLog checks that no kernel log (dmesg, /dev/kmsg,
// journalctl -k) panics the OOM parser and that every kill it reports has
// a PID and the victim's name from the log.
func FuzzParseKernelLog(f *testing.F) {
	testutil.Seed[[]byte](f, "testdata/oom/*.txt", "testdata/oom/*.kmsg", "testdata/oom/public/*.txt", "testdata/*/dev/kmsg")
	boot := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, b []byte) {
		kills, err := parseKernelLog(bytes.NewReader(b), "kmsg", boot)
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
			if k.PageSizeBytes == 0 {
				t.Fatalf("kill without a page size: %+v", k)
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
