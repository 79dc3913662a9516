package correlate

import (
	"path/filepath"
	"testing"

	"github.com/memdiag/memdiag/record"
	"github.com/memdiag/memdiag/timers"
)

// trialS8 analyses one of the new-user trial s8's REAL recordings
// (testdata/SOURCE, real/trial-s8-*) with o and the timers' projection.
func trialS8(t *testing.T, file string, o Options) Result {
	t.Helper()
	rec, err := record.ReadFile(filepath.Join("testdata", "real", file))
	if err != nil {
		t.Fatal(err)
	}
	o.Project = timers.Project
	return Analyze(rec, o)
}

// F-4 of trial s8 (testdata/SOURCE, real/trial-s8-oneshot): a one-off
// script in a hand-made cgroup (/trial-app, no systemd unit anywhere in
// the recording) ran cat over a 1.2 GiB file; trial-idle.timer, whose
// ExecStart is /bin/cat, never ran and its Slice= is elsewhere. The
// recording's cgroups place the cat in /trial-app, where no timer's
// service runs, so the program name ties it to no timer: no culprit,
// and the episode's cell is the cat itself.
func TestRealTrialS8OneShotCatNotTimers(t *testing.T) {
	res := trialS8(t, "trial-s8-oneshot.jsonl.gz", Options{})
	if len(res.Episodes) != 1 {
		t.Fatalf("%d episodes, want the one of the one-off cat and dd", len(res.Episodes))
	}
	if len(res.Culprits) != 0 {
		for _, c := range res.Culprits {
			var ties []string
			for _, tie := range c.Proof.Ties {
				ties = append(ties, tie.Program+" "+tie.How+" "+tie.Via)
			}
			t.Errorf("named %s (%.2f) through %v; its service never ran and the cat ran in /trial-app", c.Name, c.Confidence, ties)
		}
	}
	e := res.Episodes[0]
	if e.Culprit != "" || len(e.Processes) == 0 || e.Processes[0].Comm != "cat" {
		t.Errorf("episode culprit %q, top process %v; want no culprit and cat first", e.Culprit, e.Processes)
	}
}

// F-5 of trial s8 (real/trial-s8-tenant), host scope: a loop in another
// hand-made group runs trial-backup.sh, whose cat reads 1.2 GiB three
// times, every 30 s; trial-idle.timer (ExecStart=/bin/cat, never ran)
// took all 5 episodes through those cats and the script was not named.
// The script is the culprit, and the timer is not named.
func TestRealTrialS8TenantLoopNotTimer(t *testing.T) {
	res := trialS8(t, "trial-s8-tenant.jsonl.gz", Options{PSIScope: PSIHost})
	if len(res.Episodes) != 5 || len(res.Culprits) != 1 {
		t.Fatalf("%d episodes, culprits %v; want 5 and trial-backup.sh alone", len(res.Episodes), names(res))
	}
	c := res.Culprits[0]
	if c.Name != "trial-backup.sh" || c.Kind != KindProcess || c.EpisodesExplained != 5 || c.Confidence < 0.75 {
		t.Errorf("culprit %s (%s, %.2f) explaining %d; want trial-backup.sh (process, high) explaining 5 of 5", c.Name, c.Kind, c.Confidence, c.EpisodesExplained)
	}
}

// F-7 of trial s8 (real/trial-s8-cron): the same loop's cats were tied
// to a cron.d line running cat, which cannot run (no cron daemon) and
// did not start them (their ancestors are the loop's shell); the cron
// job was named at 0.74. A cron job's process must have the cron daemon
// among its recorded ancestors once the recording places processes in
// cgroups.
func TestRealTrialS8CronNotTied(t *testing.T) {
	res := trialS8(t, "trial-s8-cron.jsonl.gz", Options{})
	if len(res.Culprits) != 1 || res.Culprits[0].Name != "trial-backup.sh" || res.Culprits[0].EpisodesExplained != 4 {
		t.Fatalf("culprits %v; want trial-backup.sh alone, explaining 4 of 4", names(res))
	}
	if c := res.Culprits[0]; c.Kind != KindProcess || c.Confidence < 0.75 {
		t.Errorf("culprit %s (%s, %.2f); want a process at high confidence", c.Name, c.Kind, c.Confidence)
	}
}
