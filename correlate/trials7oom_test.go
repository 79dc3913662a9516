package correlate

import (
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/memdiag/memdiag/record"
	"github.com/memdiag/memdiag/timers"
)

func readReal(t *testing.T, name string) *record.Recording {
	t.Helper()
	rec, err := record.ReadFile(filepath.Join("testdata", "real", name))
	if err != nil {
		t.Fatal(err)
	}
	return rec
}

// Trial s7's scenario 9 (testdata/SOURCE): on a hybrid host the v1
// memory group's oom_kill counts only its own tasks, so the kill of
// trial-batch.service's python3 (in the group's child cgroup, at the
// group's limit) left it at 0 and the kill was called "outside the
// analysed group"; and the job, whose python3 was started 12 s before
// the first stall and 7 s before the second, was judged to have started
// after them (only execs inside the episode counted), so "No culprit".
func TestTrialS7OOMInChildCgroup(t *testing.T) {
	res := Analyze(readReal(t, "trial-s7-oom-v1.jsonl.gz"), Options{Project: timers.Project})
	if len(res.OOMKills) != 1 {
		t.Fatalf("OOM kills = %+v, want 1", res.OOMKills)
	}
	k := res.OOMKills[0]
	if k.InGroup == nil || *k.InGroup != 1 {
		t.Errorf("in_group = %v, want 1 (victim in /trial-app.slice/trial-batch.service, group /sys/fs/cgroup/unified/trial-app.slice)", k.InGroup)
	}
	if len(k.Victims) != 1 || k.Victims[0].PID != 4346 || k.Victims[0].OutsideScope {
		t.Errorf("victims = %+v, want python3 4346 inside the scope", k.Victims)
	}
	if len(res.Episodes) != 2 {
		t.Fatalf("%d episodes, want 2", len(res.Episodes))
	}
	if len(res.Culprits) == 0 || res.Culprits[0].Name != "trial-batch.timer" {
		t.Fatalf("culprits = %+v, want trial-batch.timer first", res.Culprits)
	}
	c := res.Culprits[0]
	if c.EpisodesExplained != 2 {
		t.Errorf("explains %d episodes, want 2", c.EpisodesExplained)
	}
	// Leads: episode start 07:09:41.427 - first exec of PID 4346
	// (inunit.sh, which exec'd python3) 07:09:29.059 = 12.4 s;
	// 07:09:56.415 - PID 4826's 07:09:49.109 = 7.3 s.
	want := []float64{12.4, 7.3}
	for i, cr := range c.Proof.Credits {
		if cr.LeadS == nil || *cr.LeadS != want[i] {
			got := "nil"
			if cr.LeadS != nil {
				got = strconv.FormatFloat(*cr.LeadS, 'f', -1, 64)
			}
			t.Errorf("credit %d lead = %s s, want %.1f s", i, got, want[i])
		}
	}
	if len(c.Proof.OOMKilled) != 1 || c.Proof.OOMKilled[0] != "python3 4346" {
		t.Errorf("oom_killed = %q, want [python3 4346]", c.Proof.OOMKilled)
	}
}

func TestCgroupWithin(t *testing.T) {
	for _, c := range []struct {
		dir, proc string
		want      bool
	}{
		{"/sys/fs/cgroup/unified/trial-app.slice", "/trial-app.slice/trial-batch.service", true},
		{"/sys/fs/cgroup/unified/trial-app.slice", "/trial-app.slice", true},
		{"/sys/fs/cgroup/memory/trial-app.slice", "/trial-app.slice/x", true},
		{"/sys/fs/cgroup/trial-app.slice", "/trial-app.slice/x", true}, // pure v2
		{"/host/sys/fs/cgroup/unified/a", "/a/b", true},                // --root
		{"/sys/fs/cgroup/unified/trial-app.slice", "/trial-app.slice-2/x", false},
		{"/sys/fs/cgroup/unified/trial-app.slice", "/", false}, // ancestor
		{"/sys/fs/cgroup/unified/a/b", "/b/x", false},          // suffix only
		{"/sys/fs/cgroup/unified/trial-app.slice", "", false},
		{"/tmp/x", "/x", false},
	} {
		if got := cgroupWithin(c.dir, c.proc); got != c.want {
			t.Errorf("cgroupWithin(%q, %q) = %v, want %v", c.dir, c.proc, got, c.want)
		}
	}
}

// Trial s7's scenario 8 (testdata/SOURCE): recorded as nobody, 329 of 330
// processes' /proc/PID/io unreadable; the episodes recur every 19.9 s,
// 4 of 4. Fewer than unknownMinHits matches gave no culprit, and the
// verdict said "no … recurring process matches them" of data that was
// not there. Now an unknown recurrence that says what it lacked.
func TestTrialS7UnreadableIOIsNotNo(t *testing.T) {
	res := Analyze(readReal(t, "trial-s7-nobody.jsonl.gz"), Options{Project: timers.Project})
	if res.Period == nil || res.Period.Matched != 4 || len(res.Episodes) != 4 {
		t.Fatalf("period %+v, %d episodes; want 4 of 4 episodes on a period", res.Period, len(res.Episodes))
	}
	if len(res.Culprits) != 1 {
		t.Fatalf("culprits = %+v, want one unknown", res.Culprits)
	}
	c := res.Culprits[0]
	if c.Kind != KindUnknown || c.EpisodesExplained != 4 || c.Period.Round(100*time.Millisecond) != 19900*time.Millisecond {
		t.Errorf("culprit %s %s explains %d every %s; want unknown, 4, 19.9s", c.Kind, c.Name, c.EpisodesExplained, c.Period)
	}
	if !slices.Contains(c.Missing, MissingIOAccess) {
		t.Errorf("missing = %v, want io_access", c.Missing)
	}
}
