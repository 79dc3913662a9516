package cmd

import (
	"github.com/memdiag/memdiag/correlate"
	"github.com/memdiag/memdiag/timers"
)

// jobProjector is how analyze projects the recording's jobs over it:
// timers.Project, which recomputes each job's firings from the schedule
// stored in the header.
func jobProjector() correlate.ProjectFunc { return timers.Project }
