package confirm

import (
	"fmt"
	"strings"

	"github.com/memdiag/memdiag/correlate"
	"github.com/memdiag/memdiag/internal/english"
	"github.com/memdiag/memdiag/internal/rootfs"
	"github.com/memdiag/memdiag/record"
	"github.com/memdiag/memdiag/timers"
)

// FindJob returns the host's job named name, as `memdiag timers` names it
// ("pmlogger_check.timer", "cron.d/pcp-pmlogger:8"); a timer may be given
// without ".timer".
func FindJob(jobs []timers.Job, name string) (timers.Job, error) {
	for _, j := range jobs {
		if j.Name == name || (j.Source == timers.Systemd && j.Name == name+".timer") {
			return j, nil
		}
	}
	var near []string
	for _, j := range jobs {
		if strings.Contains(j.Name, name) || strings.Contains(name, strings.TrimSuffix(j.Name, ".timer")) {
			near = append(near, j.Name)
		}
	}
	if len(near) > 0 {
		return timers.Job{}, fmt.Errorf("no job %q on this host; did you mean %s? (memdiag timers lists them)", name, strings.Join(near, ", "))
	}
	return timers.Job{}, fmt.Errorf("no job %q on this host (memdiag timers lists them)", name)
}

// Culprit is the job to hold off among the host's jobs: the one named
// name (--job, FindJob), else the first culprit of the verdict of the
// recording file at path (--recording, CulpritJob). A recording that
// cannot be read is a *rootfs.NamedError of --recording.
func Culprit(jobs []timers.Job, name, path string) (timers.Job, error) {
	if name != "" {
		return FindJob(jobs, name)
	}
	rec, err := record.ReadFile(path)
	if err != nil {
		return timers.Job{}, &rootfs.NamedError{Flag: "--recording", Path: path, Err: err}
	}
	return CulpritJob(rec, jobs)
}

// CulpritJob is the job a recording's verdict names first (the same
// verdict as `memdiag analyze`), looked up among the host's jobs as they
// are now. A process culprit is a *CannotHoldError; no culprit is an
// error saying so.
func CulpritJob(rec *record.Recording, jobs []timers.Job) (timers.Job, error) {
	res := correlate.Analyze(rec, correlate.Options{Project: timers.Project})
	if len(res.Culprits) == 0 && len(res.Undecided) > 0 {
		var names []string
		for _, u := range res.Undecided {
			names = append(names, u.Name)
		}
		return timers.Job{}, fmt.Errorf("the recording's verdict is undecided between %s (fired together, none standing out by its I/O): "+
			"confirm each with --job NAME to tell them apart", english.List(names, "and"))
	}
	if len(res.Culprits) == 0 {
		return timers.Job{}, fmt.Errorf("the recording's verdict names no culprit: nothing to confirm (give --job NAME to test a job anyway)")
	}
	c := res.Culprits[0]
	if c.Job == nil {
		return timers.Job{}, ProcessCulprit(c.Name)
	}
	return FindJob(jobs, c.Job.Name)
}
