package sources

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/memdiag/memdiag/record"
)

// When oom_kill rises, the victim is read from the kernel log: a real
// memcg OOM kill of this project's CI machine (/dev/kmsg records, see
// memstate/testdata/SOURCE), "Killed process 19019 (hog)" at 34436.157 s
// since boot, task_memcg=/check19-swapfull.
func TestOOMKillsFromKernelLog(t *testing.T) {
	boot := time.Date(2026, 12, 1, 18, 4, 7, 0, time.UTC)
	root := t.TempDir()
	b, err := os.ReadFile("../memstate/testdata/oom/host618-swap-oom.kmsg")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(root, "dev"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "dev/kmsg"), b, 0o600); err != nil {
		t.Fatal(err)
	}
	src := &OOMKills{Root: root, Boot: boot}
	sample := func(sinceBoot time.Duration, oom uint64) *record.Sample {
		s := &record.Sample{Time: boot.Add(sinceBoot), VMStat: &record.VMStat{OOMKill: &oom}}
		if err := src.Fill(context.Background(), s); err != nil {
			t.Fatal(err)
		}
		return s
	}
	// The first sample has nothing to compare with: kills before the
	// recording are not its.
	if s := sample(34430*time.Second, 5); len(s.OOMKills) != 0 {
		t.Errorf("first sample: %+v, want no kill", s.OOMKills)
	}
	s := sample(34437*time.Second, 6)
	want := record.OOMVictim{PID: 19019, Comm: "hog", Cgroup: "/check19-swapfull", OOMCgroup: "/check19-swapfull", Constraint: "memcg"}
	if len(s.OOMKills) == 1 {
		// The kill line's stamp, to the millisecond.
		if d := s.OOMKills[0].Time.Sub(boot.Add(34436157 * time.Millisecond)); d < 0 || d >= time.Millisecond {
			t.Errorf("kill time %s, want boot + 34436.157 s", s.OOMKills[0].Time)
		}
		s.OOMKills[0].Time = time.Time{}
	}
	if len(s.OOMKills) != 1 || s.OOMKills[0] != want {
		t.Errorf("kills = %+v, want [%+v]", s.OOMKills, want)
	}
	// A later rise does not record the same kill again.
	if s := sample(34440*time.Second, 7); len(s.OOMKills) != 0 {
		t.Errorf("later sample: %+v, want no kill recorded twice", s.OOMKills)
	}
	// No rise: the log is not read.
	src.Root = "/nonexistent"
	if s := sample(34441*time.Second, 7); len(s.OOMKills) != 0 {
		t.Errorf("no rise: %+v", s.OOMKills)
	}
}
