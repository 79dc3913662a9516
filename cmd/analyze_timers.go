package cmd

import "github.com/memdiag/memdiag/correlate"

// jobProjector is how analyze projects the recording's jobs over it.
//
// TODO(merge timers): return timers.Project. Until the timers branch is
// merged there is no projection, and correlate ties jobs to episodes only
// through their processes' units and program names (it says so in a note).
func jobProjector() correlate.ProjectFunc { return nil }
