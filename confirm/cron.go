package confirm

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/memdiag/memdiag/timers"
)

// heldPrefix marks a crontab line memdiag commented out (timers.HeldMarker:
// memdiag timers lists such a line as held off).
const heldPrefix = timers.HeldMarker

// prepareCron checks that the job's line is still what the inventory
// read, and returns the change that comments it out.
func prepareCron(job timers.Job, root string, now time.Time) (Change, error) {
	if job.File == "" || job.Line < 1 {
		return Change{}, fmt.Errorf("%s: no crontab file and line to hold off", job.Name)
	}
	path := filepath.Join(root, job.File)
	lines, _, err := readLines(path)
	if err != nil {
		return Change{}, err
	}
	if job.Line > len(lines) {
		return Change{}, fmt.Errorf("%s: has %d lines, the job was on line %d", path, len(lines), job.Line)
	}
	orig := lines[job.Line-1]
	if strings.HasPrefix(orig, heldPrefix) {
		return Change{}, fmt.Errorf("%s:%d: already held off by memdiag confirm (run memdiag confirm --restore)", path, job.Line)
	}
	if t := strings.TrimSpace(orig); t == "" || strings.HasPrefix(t, "#") {
		return Change{}, fmt.Errorf("%s:%d: not a job line: %q", path, job.Line, orig)
	}
	return Change{Kind: KindCron, Job: job.Name, At: now, File: path, Line: job.Line, Original: orig, Held: heldPrefix + orig}, nil
}

func applyCron(c Change) error {
	return rewriteLine(c.File, c.Line, c.Original, c.Held)
}

// undoCron puts the original line back where the held one is. A file
// that already has the original line (the change was never made, or was
// undone) needs nothing.
func undoCron(c Change) error {
	lines, _, err := readLines(c.File)
	if err != nil {
		return err
	}
	at := -1
	if c.Line <= len(lines) && lines[c.Line-1] == c.Held {
		at = c.Line
	} else {
		for i, l := range lines {
			if l == c.Held {
				at = i + 1
				break
			}
		}
	}
	if at < 0 {
		for _, l := range lines {
			if l == c.Original {
				return nil
			}
		}
		return fmt.Errorf("%s: neither the held line nor the original is there (the file changed); put this line back by hand: %s", c.File, c.Original)
	}
	return rewriteLine(c.File, at, c.Held, c.Original)
}

// readLines reads a crontab into lines (without their newlines) and says
// whether it ended with a newline.
func readLines(path string) ([]string, bool, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, false, err
	}
	nl := bytes.HasSuffix(b, []byte("\n"))
	s := strings.TrimSuffix(string(b), "\n")
	if s == "" && !nl {
		return nil, false, nil
	}
	return strings.Split(s, "\n"), nl, nil
}

// rewriteLine replaces line n (1-based), which must read want, by repl,
// atomically: a temporary file beside it with the same mode and owner,
// renamed over it. The temporary's name starts with a dot, which cron
// ignores in /etc/cron.d (cron(8): names must consist of letters, digits,
// '_' and '-'). Renaming changes the directory's mtime, which is what
// cron checks to reload.
func rewriteLine(path string, n int, want, repl string) error {
	lines, nl, err := readLines(path)
	if err != nil {
		return err
	}
	if n < 1 || n > len(lines) || lines[n-1] != want {
		return fmt.Errorf("%s:%d: the line changed since it was read; expected %q", path, n, want)
	}
	lines[n-1] = repl
	out := strings.Join(lines, "\n")
	if nl {
		out += "\n"
	}
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	tmp := filepath.Join(filepath.Dir(path), ".memdiag-confirm-"+filepath.Base(path))
	if err := os.WriteFile(tmp, []byte(out), fi.Mode().Perm()); err != nil {
		return err
	}
	ok := false
	defer func() {
		if !ok {
			_ = os.Remove(tmp)
		}
	}()
	if err := os.Chmod(tmp, fi.Mode().Perm()); err != nil { // umask
		return err
	}
	if st, is := fi.Sys().(*syscall.Stat_t); is && os.Geteuid() == 0 {
		if err := os.Chown(tmp, int(st.Uid), int(st.Gid)); err != nil {
			return err
		}
	}
	if err := syncFile(tmp); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		return err
	}
	ok = true
	return nil
}

func syncFile(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		_ = f.Close()
		return err
	}
	return f.Close()
}
