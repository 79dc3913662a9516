package report

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/memdiag/memdiag/correlate"
	"github.com/memdiag/memdiag/record"
	"github.com/memdiag/memdiag/timers"
)

// analyzeFile analyses one of correlate's kept recordings.
func analyzeFile(t *testing.T, rel string, o correlate.Options) correlate.Result {
	t.Helper()
	rec, err := record.ReadFile(filepath.Join("..", "correlate", "testdata", rel))
	if err != nil {
		t.Fatal(err)
	}
	return correlate.Analyze(rec, o)
}

// The evidence prose is written here from correlate's structured proof;
// these are the lines correlate's tests once checked in its own prose.
func TestEvidenceScenarios(t *testing.T) {
	proj := correlate.Options{Project: timers.Project}
	t.Run("union", func(t *testing.T) {
		r := analyzeFile(t, "union.jsonl.gz", proj)
		if len(r.Culprits) == 0 {
			t.Fatal("no culprit")
		}
		ev := Evidence(&r, &r.Culprits[0])
		for _, want := range []string{
			"systemd job, fires every 20m (*:05/20), defined in",
			"6 of 6 firings in the recording were followed within 1m by an episode",
		} {
			if !slices.ContainsFunc(ev, func(e string) bool { return strings.Contains(e, want) }) {
				t.Errorf("evidence %q lacks %q", ev, want)
			}
		}
	})
	t.Run("inprocess", func(t *testing.T) {
		r := analyzeFile(t, "inprocess.jsonl.gz", proj)
		if len(r.Culprits) == 0 {
			t.Fatal("no culprit")
		}
		ev := Evidence(&r, &r.Culprits[0])
		want := "recurs every 15m, postgres (postgresql.service) wrote 1.2 GiB each time, no timer or cron job: an in-process schedule?"
		if len(ev) == 0 || ev[0] != want {
			t.Errorf("evidence %q; want first %q", ev, want)
		}
	})
	t.Run("coalesced", func(t *testing.T) {
		r := analyzeFile(t, "scenarios/09-coalesced.jsonl.gz", proj)
		if len(r.Culprits) == 0 || r.Culprits[0].Name != "bravo.timer" {
			t.Fatalf("culprits %+v; want bravo.timer first", r.Culprits)
		}
		ev := Evidence(&r, &r.Culprits[0])
		want := "fires in one wake-up with alpha.timer, charlie.timer, delta.timer, echo.timer: each is ranked by its own I/O; RandomizedDelaySec="
		if !slices.ContainsFunc(ev, func(e string) bool { return strings.HasPrefix(e, want) }) {
			t.Errorf("evidence %q lacks %q", ev, want)
		}
	})
	t.Run("cron", func(t *testing.T) {
		r := analyzeFile(t, "scenarios/10-cron-evidence.jsonl.gz", proj)
		if len(r.Culprits) != 1 {
			t.Fatalf("culprits %+v; want the cron line", r.Culprits)
		}
		for _, e := range Evidence(&r, &r.Culprits[0]) {
			if strings.Contains(e, "not enabled") || strings.Count(e, "dd") > 1 {
				t.Errorf("false or repeated evidence: %q", e)
			}
		}
	})
	t.Run("did-not-run", func(t *testing.T) {
		r := analyzeFile(t, "scenarios/03-did-not-run.jsonl.gz", proj)
		var got []string
		for _, nr := range r.NotRun {
			got = append(got, nr.Name+": "+NotRunReason(nr))
		}
		want := []string{
			"report.timer: scheduled but did not run: the recording says it could not fire then (does not fire now: PID 1 is not systemd)",
			"decoy.timer: scheduled but did not run: 5 of its firings fell near episodes, but no process of it was recorded",
		}
		if !slices.Equal(got, want) {
			t.Errorf("not run %q; want %q", got, want)
		}
	})
}

// A job memdiag timers lists only with --all (active false) is inactive,
// not "scheduled but did not run"; an active one that did not run still is.
func TestNotRunReasonInactive(t *testing.T) {
	why := "does nothing when booted with systemd (sbin/init is systemd): the command checks /run/systemd/system and its systemd unit does the work"
	inactive := correlate.NotRun{Name: "cron.d/sysstat:6", FiringsNear: 3,
		Job: &timers.Job{Name: "cron.d/sysstat:6", Source: timers.Cron, Active: false, Reason: why}}
	if got, want := NotRunReason(inactive), "inactive, it cannot run here: "+why; got != want {
		t.Errorf("inactive job: %q; want %q", got, want)
	}
	active := inactive
	active.Job = &timers.Job{Name: "cron.d/sysstat:6", Source: timers.Cron, Active: true}
	if got, want := NotRunReason(active), "scheduled but did not run: 3 of its firings fell near episodes, but no process of it was recorded"; got != want {
		t.Errorf("active job: %q; want %q", got, want)
	}
}
