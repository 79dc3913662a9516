package confirm

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/memdiag/memdiag/internal/rootfs"
	"github.com/memdiag/memdiag/timers"
)

// Change kinds.
const (
	KindCron    = "cron"          // a crontab line commented out
	KindSystemd = "systemd-timer" // a timer unit stopped
	// KindDropIn (fix.go): a drop-in installed for confirm --with.
)

// Change is one change memdiag makes to hold a job off, as written to the
// state file before it is made. Undoing it ([Undo]) is idempotent: it
// checks the host and does only what is still needed, so a run killed
// between writing the state and making the change is undone correctly.
type Change struct {
	Kind string    `json:"kind"`
	Job  string    `json:"job"` // the job's name in `memdiag timers`
	At   time.Time `json:"at"`  // when the change was recorded

	// Cron: the crontab (absolute path), the 1-based line, the line as it
	// was and as memdiag writes it while the job is held off (commented
	// out) or while a fix is in place (the --with file's line).
	// Drop-in: the drop-in's absolute path.
	File     string `json:"file,omitempty"`
	Line     int    `json:"line,omitempty"`
	Original string `json:"original,omitempty"`
	Held     string `json:"held,omitempty"`

	// Systemd: the timer unit and whether it was active (only an active
	// timer is stopped, and only a stopped one is started again).
	Unit      string `json:"unit,omitempty"`
	WasActive bool   `json:"was_active,omitempty"`

	// Fix is the --with file the change puts in place (cron, drop-in).
	Fix string `json:"fix,omitempty"`
	// Drop-in: its text as written, and the UNIT.d folder memdiag made
	// for it ("" when it was there), removed after if empty.
	Content string `json:"content,omitempty"`
	MadeDir string `json:"made_dir,omitempty"`
}

// Describe says what the change does, for the report.
func (c Change) Describe() string {
	switch c.Kind {
	case KindCron:
		if c.Fix != "" {
			return fmt.Sprintf("%s: line %d of %s replaced by the line of %s: %s", c.Job, c.Line, c.File, c.Fix, c.Held)
		}
		return fmt.Sprintf("%s: line %d of %s commented out with the marker %q", c.Job, c.Line, c.File, heldPrefix)
	case KindSystemd:
		if !c.WasActive {
			return fmt.Sprintf("%s: the timer was not active; nothing stopped", c.Unit)
		}
		return fmt.Sprintf("%s: stopped (systemctl stop) for each run of B blocks and started again after it", c.Unit)
	case KindDropIn:
		return fmt.Sprintf("%s: %s installed as %s (systemctl daemon-reload), removed after each run of B blocks", c.Unit, c.Fix, c.File)
	}
	return c.Job
}

// CannotHoldError says memdiag cannot hold a culprit off, and how the user
// could.
type CannotHoldError struct {
	Culprit string
	Why     string
	Advice  string
}

func (e *CannotHoldError) Error() string {
	return fmt.Sprintf("cannot hold %s off: %s; %s", e.Culprit, e.Why, e.Advice)
}

// Env is what holding and undoing need from the host.
type Env struct {
	// Root is the filesystem root the job's files are under ("/" live).
	Root string
	// Units connects to the systemd manager (D-Bus); nil means none.
	Units func(ctx context.Context) (UnitControl, error)
}

// Prepare returns the change that would hold job off, reading the host as
// it is now; it changes nothing. A job memdiag cannot hold off is a
// *CannotHoldError.
func Prepare(ctx context.Context, job timers.Job, env Env, now time.Time) (Change, error) {
	switch job.Source {
	case timers.Cron:
		return prepareCron(job, env.Root, now)
	case timers.Systemd:
		return prepareSystemd(ctx, job, env, now)
	case timers.Anacron:
		return Change{}, &CannotHoldError{Culprit: job.Name, Why: "anacron runs it at most once a day, so blocks of minutes cannot see it",
			Advice: "run its command by hand in A blocks, or compare two days with memdiag compare"}
	}
	return Change{}, &CannotHoldError{Culprit: job.Name, Why: fmt.Sprintf("unknown scheduler %q", job.Source), Advice: "hold it off by hand and compare two runs with memdiag compare"}
}

// ProcessCulprit is the error for a culprit that is a process, not a job:
// memdiag will not stop or pause another program.
func ProcessCulprit(name string) error {
	return &CannotHoldError{Culprit: name, Why: "it is a process, not a scheduled job, and memdiag does not stop or pause other programs",
		Advice: "stop it yourself (systemctl stop UNIT, or kill -STOP PID and kill -CONT PID after), then compare a run with and without it using memdiag compare"}
}

// Apply makes the change.
func Apply(ctx context.Context, c Change, env Env) error {
	switch c.Kind {
	case KindCron:
		return applyCron(c)
	case KindSystemd:
		return applySystemd(ctx, c, env)
	case KindDropIn:
		return applyDropIn(ctx, c, env)
	}
	return fmt.Errorf("unknown change kind %q", c.Kind)
}

// Undo puts back what c changed, if it is still changed.
func Undo(ctx context.Context, c Change, env Env) error {
	switch c.Kind {
	case KindCron:
		return undoCron(c)
	case KindSystemd:
		return undoSystemd(ctx, c, env)
	case KindDropIn:
		return undoDropIn(ctx, c, env)
	}
	return fmt.Errorf("unknown change kind %q", c.Kind)
}

// ErrNoSystemd is returned for a timer when no systemd manager answers.
var ErrNoSystemd = errors.New("no systemd manager to stop the timer (systemd is not PID 1 here, or D-Bus does not answer)")

// Describe is each change's Describe, in order.
func Describe(cs []Change) []string {
	var out []string
	for _, c := range cs {
		out = append(out, c.Describe())
	}
	return out
}

// Ask tells w what each B block will change (what, one line each) and
// where the state file is, and reads the answer from in (a terminal):
// true for "y" or "yes". Ctrl-C (ctx done) ends the wait with its error.
func Ask(ctx context.Context, in io.Reader, w io.Writer, what []string, state string) (bool, error) {
	fmt.Fprintf(w, "memdiag confirm will change this host during each B block:\n  %s\nState file: %s. Go on? [y/N] ", strings.Join(what, "\n  "), state)
	r := rootfs.Stdin(ctx, in, 4<<10)
	defer r.Close()
	line, err := bufio.NewReader(r).ReadString('\n')
	if ctx.Err() != nil {
		return false, err
	}
	a := strings.ToLower(strings.TrimSpace(line))
	return a == "y" || a == "yes", nil
}
