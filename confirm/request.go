package confirm

import (
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/memdiag/memdiag/internal/usage"
	"github.com/memdiag/memdiag/redact"
)

// Request is what `memdiag confirm` is asked to do: hold off Jobs (their
// names in memdiag timers, --job, repeated for jobs that act together)
// or the jobs Recording's verdict names (--recording) during every B
// block, while Command (the load
// after --) runs in Pairs pairs of blocks of Block each (0: one run of
// the load), with MinEffect percent of A as the smallest effect that
// matters; or, with Restore, only undo what a killed run left. With,
// when set, is a file with a proposed fix (--with) put in place for the
// B blocks instead of holding the job off (PrepareFix).
type Request struct {
	Jobs      []string
	Recording string
	With      string
	Command   []string
	Pairs     int
	Block     time.Duration
	MinEffect float64 // percent of A
	Restore   bool
	// KeepSecrets (--no-redact) shows Command as it is in the report;
	// else it goes through memdiag's one redaction policy, as every
	// command line memdiag writes.
	KeepSecrets bool
	// FiringGap is the longest an A block can go without a firing of the
	// jobs held off, and GapWhat what it is ([FiringGap]); 0 when not
	// known.
	FiringGap time.Duration
	GapWhat   string
}

// WarnShortBlock warns on w when --block is shorter than FiringGap:
// some A blocks may hold no firing.
func (r Request) WarnShortBlock(w io.Writer) {
	if r.Block > 0 && r.Block < r.FiringGap {
		fmt.Fprintf(w, "memdiag: warning: --block %s is shorter than %s (%s): some A blocks may hold no firing\n", r.Block, r.GapWhat, r.FiringGap)
	}
}

// ShownCommand is Command as the report shows it: redacted unless
// KeepSecrets.
func (r Request) ShownCommand() []string {
	if r.KeepSecrets {
		return r.Command
	}
	return redact.Args(r.Command)
}

// Check checks the request's combination and ranges: Restore alone, or
// jobs (each once) or a Recording, not both, with a load, 1 to 1000 pairs, a
// Block not negative and a MinEffect strictly between 0 and 100. Its
// errors are *usage.Error naming the flags.
func (r Request) Check() error {
	if r.Restore {
		if len(r.Jobs) > 0 || r.Recording != "" || len(r.Command) > 0 {
			return usage.Errorf("--restore takes no job, recording or load: it undoes what the state file lists")
		}
		if r.With != "" {
			return usage.Errorf("--restore takes no --with: it undoes what the state file lists, a fix in place included")
		}
		return nil
	}
	if (len(r.Jobs) == 0) == (r.Recording == "") {
		return usage.Errorf("give --job NAME (once per job held off together) or --recording FILE, not both")
	}
	for i, j := range r.Jobs {
		if j == "" {
			return usage.Errorf("--job: empty name")
		}
		if slices.Contains(r.Jobs[:i], j) {
			return usage.Errorf("--job %s given twice", j)
		}
	}
	if r.With != "" && len(r.Jobs) > 1 {
		return usage.Errorf("--with puts one job's fix in place: give it with one --job NAME")
	}
	if len(r.Command) == 0 {
		return usage.Errorf("no load: give the load command after --, e.g. memdiag confirm --job NAME -- ./load-test.sh")
	}
	if r.Pairs < 1 || r.Pairs > 1000 {
		return usage.Errorf("--pairs %d: want 1 to 1000", r.Pairs)
	}
	if r.Block < 0 {
		return usage.Errorf("--block must not be negative")
	}
	if r.MinEffect <= 0 || r.MinEffect >= 100 {
		return usage.Errorf("--min-effect %g: want a percentage between 0 and 100", r.MinEffect)
	}
	return nil
}
