package confirm

import (
	"errors"
	"strings"
	"testing"

	"github.com/memdiag/memdiag/internal/rootfs"
	"github.com/memdiag/memdiag/record"
	"github.com/memdiag/memdiag/timers"
)

func TestCulpritJobs(t *testing.T) {
	// correlate's scenario 10: analyze names cron.d/etl:1 first.
	rec, err := record.ReadFile("../correlate/testdata/scenarios/10-cron-evidence.jsonl.gz")
	if err != nil {
		t.Fatal(err)
	}
	host := []timers.Job{
		{Name: "pmlogger_check.timer", Source: timers.Systemd},
		{Name: "cron.d/etl:1", Source: timers.Cron, File: "etc/cron.d/etl", Line: 1},
	}
	js, err := CulpritJobs(rec, host)
	if err != nil || len(js) != 1 || js[0].Name != "cron.d/etl:1" || js[0].File != "etc/cron.d/etl" {
		t.Fatalf("jobs %+v, err %v", js, err)
	}
	// The recording's culprit is no job on this host now.
	if _, err := CulpritJobs(rec, host[:1]); err == nil || !strings.Contains(err.Error(), `no job "cron.d/etl:1" on this host`) {
		t.Errorf("err %v", err)
	}
	// A process culprit (correlate's in-process schedule: postgres).
	rec, err = record.ReadFile("../correlate/testdata/inprocess.jsonl.gz")
	if err != nil {
		t.Fatal(err)
	}
	var ch *CannotHoldError
	var want string
	if _, err := CulpritJobs(rec, host); !errors.As(err, &ch) || ch.Culprit != "postgres" {
		t.Errorf("process culprit: %v", err)
	}
	// Two timers named together (correlate's union fixture: pcp's two
	// checks, each explaining its own episodes) are held off together.
	rec, err = record.ReadFile("../correlate/testdata/union.jsonl.gz")
	if err != nil {
		t.Fatal(err)
	}
	host = append(host, timers.Job{Name: "pmlogger_farm_check.timer", Source: timers.Systemd})
	js, err = CulpritJobs(rec, host)
	var names []string
	for _, j := range js {
		names = append(names, j.Name)
	}
	if want := "pmlogger_check.timer pmlogger_farm_check.timer"; err != nil || strings.Join(names, " ") != want {
		t.Errorf("union: jobs %v, err %v; want %s", names, err, want)
	}
	if _, err := CulpritJobs(rec, host[:2]); err == nil || !strings.Contains(err.Error(), `no job "pmlogger_farm_check.timer" on this host`) {
		t.Errorf("union, one timer gone: %v", err)
	}
	// An undecided verdict (correlate's scenario 9: five timers in one
	// wake-up, none standing out) names no job to hold off: each must be
	// given with --job.
	rec, err = record.ReadFile("../correlate/testdata/scenarios/09-coalesced.jsonl.gz")
	if err != nil {
		t.Fatal(err)
	}
	want = "the recording's verdict is undecided between bravo.timer, charlie.timer, delta.timer, echo.timer and alpha.timer (fired together, none standing out by its I/O): confirm each with --job NAME"
	if _, err := CulpritJobs(rec, host); err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("undecided: %v; want %q", err, want)
	}
}

func TestFindJob(t *testing.T) {
	host := []timers.Job{{Name: "pmlogger_check.timer", Source: timers.Systemd}, {Name: "pmlogger_farm_check.timer", Source: timers.Systemd}}
	if j, err := FindJob(host, "pmlogger_check"); err != nil || j.Name != "pmlogger_check.timer" {
		t.Errorf("without .timer: %+v %v", j, err)
	}
	if _, err := FindJob(host, "pmlogger"); err == nil || !strings.Contains(err.Error(), "did you mean pmlogger_check.timer, pmlogger_farm_check.timer?") {
		t.Errorf("near names: %v", err)
	}
}

// TestCulprit: --job is looked up by name; --recording is read and its
// verdict's jobs taken; a recording that cannot be read is named
// with its flag.
func TestCulprit(t *testing.T) {
	host := []timers.Job{{Name: "pmlogger_check.timer", Source: timers.Systemd}, {Name: "cron.d/etl:1", Source: timers.Cron}}
	if js, err := Culprits(host, []string{"pmlogger_check"}, "ignored"); err != nil || len(js) != 1 || js[0].Name != "pmlogger_check.timer" {
		t.Errorf("--job: %+v, %v", js, err)
	}
	if js, err := Culprits(host, []string{"cron.d/etl:1", "pmlogger_check"}, ""); err != nil || len(js) != 2 || js[0].Name != "cron.d/etl:1" || js[1].Name != "pmlogger_check.timer" {
		t.Errorf("--job twice: %+v, %v", js, err)
	}
	if _, err := Culprits(host, []string{"pmlogger_check.timer", "pmlogger_check"}, ""); err == nil || err.Error() != "--job pmlogger_check names pmlogger_check.timer, given already" {
		t.Errorf("one timer twice: %v", err)
	}
	if js, err := Culprits(host, nil, "../correlate/testdata/scenarios/10-cron-evidence.jsonl.gz"); err != nil || len(js) != 1 || js[0].Name != "cron.d/etl:1" {
		t.Errorf("--recording: %+v, %v", js, err)
	}
	var ne *rootfs.NamedError
	if _, err := Culprits(host, nil, "/nonexistent/run.jsonl"); !errors.As(err, &ne) || !strings.HasPrefix(err.Error(), "--recording /nonexistent/run.jsonl: ") {
		t.Errorf("unreadable recording: %T %v", err, err)
	}
}
