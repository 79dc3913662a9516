package confirm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/memdiag/memdiag/internal/supervise"
)

// DefaultStatePath is where a run records its changes to the host.
const DefaultStatePath = "/var/lib/memdiag/confirm.state"

// stateDoc is the state file: the run that owns it and the changes it
// has made or is about to make, oldest first.
type stateDoc struct {
	Version int       `json:"version"`
	PID     int       `json:"pid"`
	Start   uint64    `json:"pid_start_ticks"` // /proc/PID/stat field 22, to tell a reused PID
	Began   time.Time `json:"began"`
	Changes []Change  `json:"changes"`
}

// State is a run's record of its changes. Every change is written (and
// fsynced) before it is made and removed only after it is undone, so the
// file always lists everything that may need undoing.
type State struct {
	path string
	doc  stateDoc
	env  Env
	// Now stamps each change when Hold records it (Change.At): the hold
	// of the B block a killed run was in, which --restore says it undid,
	// not when the run was prepared. OpenState sets it to time.Now.
	Now func() time.Time
}

// RestoreCommand is the command that undoes what the state file at path
// lists: `memdiag confirm --restore`, with --state when path is not the
// default (without it, --restore reads the default file and finds
// nothing).
func RestoreCommand(path string) string {
	if filepath.Clean(path) == DefaultStatePath {
		return "memdiag confirm --restore"
	}
	return "memdiag confirm --restore --state " + path
}

// ErrPending says a state file from another run exists.
var ErrPending = errors.New("a previous memdiag confirm left changes on this host")

// OpenState creates the state file at path for this run. It refuses when
// one exists: a live run owns it, or a killed run left changes that
// `memdiag confirm --restore` must undo first.
func OpenState(path string, env Env, now time.Time) (*State, error) {
	if old, err := readState(path); err == nil {
		if owner := liveOwner(old); owner != 0 {
			return nil, fmt.Errorf("%s: another memdiag confirm (pid %d) is running", path, owner)
		}
		return nil, fmt.Errorf("%w (%s, %d change(s) from pid %d at %s): run %s", ErrPending, path, len(old.Changes), old.PID, old.Began.Format(time.RFC3339), RestoreCommand(path))
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, err
	}
	s := &State{path: path, env: env, doc: stateDoc{Version: 1, PID: os.Getpid(), Began: now}, Now: time.Now}
	s.doc.Start, _ = supervise.StartOf(os.Getpid())
	return s, s.save()
}

// Hold records c, then makes it.
func (s *State) Hold(ctx context.Context, c Change) error {
	c.At = s.Now()
	s.doc.Changes = append(s.doc.Changes, c)
	if err := s.save(); err != nil {
		s.doc.Changes = s.doc.Changes[:len(s.doc.Changes)-1]
		return fmt.Errorf("state file, before holding %s off: %w", c.Job, err)
	}
	return Apply(ctx, c, s.env)
}

// Pending is how many recorded changes are not undone yet.
func (s *State) Pending() int { return len(s.doc.Changes) }

// Release undoes every recorded change, newest first, and forgets each
// one once it is undone. It goes on after a failure and returns all.
func (s *State) Release(ctx context.Context) error {
	var errs []error
	for i := len(s.doc.Changes) - 1; i >= 0; i-- {
		if err := Undo(ctx, s.doc.Changes[i], s.env); err != nil {
			errs = append(errs, err)
			continue
		}
		s.doc.Changes = slices.Delete(s.doc.Changes, i, i+1)
		if err := s.save(); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Close releases what is held and removes the state file when nothing is
// left to undo; otherwise the file stays for --restore.
func (s *State) Close(ctx context.Context) error {
	err := s.Release(ctx)
	if len(s.doc.Changes) == 0 {
		if rerr := os.Remove(s.path); rerr != nil && !errors.Is(rerr, fs.ErrNotExist) {
			err = errors.Join(err, rerr)
		}
	}
	return err
}

// Restore undoes what a run that did not finish left in the state file at
// path, and removes the file. It returns the changes undone; none (and
// no error) when there is no file. It refuses while the run that owns the
// file is alive.
func Restore(ctx context.Context, path string, env Env) ([]Change, error) {
	doc, err := readState(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if owner := liveOwner(doc); owner != 0 {
		return nil, fmt.Errorf("%s: memdiag confirm (pid %d) is still running; stop it (Ctrl-C or kill %d) and it puts everything back itself", path, owner, owner)
	}
	s := &State{path: path, doc: doc, env: env}
	undone := slices.Clone(doc.Changes)
	if err := s.Close(ctx); err != nil {
		return nil, err
	}
	return undone, nil
}

func readState(path string) (stateDoc, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return stateDoc{}, err
	}
	var d stateDoc
	if err := json.Unmarshal(b, &d); err != nil {
		return stateDoc{}, fmt.Errorf("%s: not a memdiag confirm state file: %w", path, err)
	}
	if d.Version != 1 {
		return stateDoc{}, fmt.Errorf("%s: state file version %d, this memdiag reads 1", path, d.Version)
	}
	return d, nil
}

// save writes the state to a temporary file, fsyncs it and renames it
// into place, so a crash leaves the old or the new state, never half.
func (s *State) save() error {
	b, err := json.MarshalIndent(s.doc, "", "  ")
	if err != nil {
		return err
	}
	tmp := s.path + ".tmp"
	if err := os.WriteFile(tmp, append(b, '\n'), 0o600); err != nil {
		return err
	}
	if err := syncFile(tmp); err != nil {
		return err
	}
	return os.Rename(tmp, s.path)
}

// liveOwner is the PID of the run that wrote doc if it still runs (same
// PID and start time), else 0.
func liveOwner(doc stateDoc) int {
	if doc.PID == os.Getpid() {
		return 0
	}
	t, ok := supervise.StartOf(doc.PID)
	if !ok || t != doc.Start {
		return 0
	}
	return doc.PID
}
