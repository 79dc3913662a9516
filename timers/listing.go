package timers

import (
	"fmt"
	"time"

	"github.com/memdiag/memdiag/internal/english"
)

// Listing is what `memdiag timers` lists of a host's jobs: the jobs shown
// and what is wrong with their definitions.
type Listing struct {
	// Jobs are the jobs shown: every job when all, else the jobs that run
	// and those whose definition has an error.
	Jobs []Job
	// Malformed are the definitions' errors ([Problems]: unit files,
	// OnCalendar= expressions, crontab lines), in job order; they fail
	// `timers --strict`.
	Malformed []string
	// Duplicates are the programs that run from two definitions
	// ([Duplicates]): shown under the listing after Malformed, but the
	// host's configuration, not a parse error.
	Duplicates []Duplicate
	// NotListed is how many jobs were left out because they do not run
	// here (0 with all): `--all` lists them, with why.
	NotListed int
}

// NewListing chooses the jobs to list among jobs (every one when all;
// else those whose files say they run, those systemd has active now —
// a timer started without being enabled — and the malformed) and
// gathers their problems; base and runLoc (the zone jobs run in) date the
// firings [Duplicates] compares.
func NewListing(jobs []Job, all bool, base time.Time, runLoc *time.Location) Listing {
	l := Listing{Jobs: jobs, Malformed: Problems(jobs), Duplicates: Duplicates(jobs, base, runLoc)}
	if !all {
		l.Jobs = nil
		for _, j := range jobs {
			if j.Active || (j.LiveActive != nil && *j.LiveActive) || len(j.Errors) > 0 {
				l.Jobs = append(l.Jobs, j)
			}
		}
		l.NotListed = len(jobs) - len(l.Jobs)
	}
	return l
}

// StrictError is the error of `timers --strict`: how many definitions
// are malformed; nil when none is.
func (l Listing) StrictError() error {
	if len(l.Malformed) == 0 {
		return nil
	}
	return fmt.Errorf("%s in periodic job definitions (--strict)", english.Count(len(l.Malformed), "problem"))
}
