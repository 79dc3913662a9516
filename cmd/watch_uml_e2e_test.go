package cmd_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memdiag/memdiag/internal/testenv"
	"github.com/memdiag/memdiag/record"
)

// TestWatchWithoutPSIUMLE2E runs memdiag watch on a real kernel that lacks
// what this host has: Debian's user-mode Linux 6.1 is built without
// CONFIG_PSI and without the process-events connector. watch must record
// anyway, say once per missing feature what is missing, and leave the PSI
// fields out of the samples rather than writing zeros.
func TestWatchWithoutPSIUMLE2E(t *testing.T) {
	testenv.RequireRoot(t, "a user-mode Linux guest") // the guest's root is the host's /
	// Its own guest and assertions on it only: beside the other such
	// tests (testenv.Shared), never beside one that reads the host.
	t.Parallel()
	u := testenv.NewSharedUML(t)
	memdiag := testenv.BuildMemdiag(t)
	// --no-timers: what is checked is PSI and the events connector;
	// reading the host's unit files and crontabs through hostfs took
	// most of the guest's minute.
	script := fmt.Sprintf(`
%s watch --no-timers --duration 4s --out /run/out/rec.jsonl.gz > /run/out/watch.out 2> /run/out/watch.err
echo $? > /run/out/watch.rc
`, memdiag)
	if err := u.Boot(t, script, 2*time.Minute); err != nil {
		t.Fatalf("%v\n%s", err, u.Log())
	}
	read := func(name string) string { return u.Read(t, name) }
	stderr := read("watch.err")
	t.Logf("watch's stderr in the guest:\n%s", stderr)
	if rc := strings.TrimSpace(read("watch.rc")); rc != "0" {
		t.Fatalf("watch exited %s", rc)
	}
	for _, once := range []string{"/proc/pressure", "process-events connector: unavailable"} {
		if n := strings.Count(stderr, once); n != 1 {
			t.Errorf("stderr says %q %d times, want once", once, n)
		}
	}
	rec, err := record.ReadFile(filepath.Join(u.Out, "rec.jsonl.gz"))
	if err != nil {
		t.Fatal(err)
	}
	if len(rec.Samples) < 4 {
		t.Fatalf("%d samples in 4 s at 1 s, want at least 4", len(rec.Samples))
	}
	for i, s := range rec.Samples {
		if s.PSI != nil && s.PSI.Memory != nil {
			t.Fatalf("sample %d has memory PSI %+v on a kernel without PSI", i, s.PSI.Memory)
		}
		if s.Meminfo == nil || s.Meminfo.MemTotal == nil || *s.Meminfo.MemTotal == 0 {
			t.Fatalf("sample %d lacks meminfo", i)
		}
	}
	if !strings.Contains(read("watch.out"), "n/a") {
		t.Errorf("live rows do not show n/a for PSI:\n%s", read("watch.out"))
	}
}
