package confirm

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/coreos/go-systemd/v22/unit"

	"github.com/memdiag/memdiag/internal/rootfs"
	"github.com/memdiag/memdiag/timers"
)

// KindDropIn is a change that installs a systemd drop-in (confirm --with).
const KindDropIn = "systemd-dropin"

// DropInName is the name of the drop-in memdiag installs in
// /etc/systemd/system/UNIT.d/ for the B blocks of `confirm --with`.
// Drop-ins apply in the order of their names over all folders
// (systemd.unit(5)), so a later name (override.conf, which `systemctl
// edit` writes) setting the same key wins over it.
const DropInName = "50-memdiag-confirm.conf"

// dropInDir is where a system unit's local drop-ins go (systemd.unit(5)).
const dropInDir = "etc/systemd/system"

// timerKeys are the [Timer] settings of systemd.timer(5): one of them
// under [Service] is a mistake systemd would only warn about.
var timerKeys = []string{"OnActiveSec", "OnBootSec", "OnStartupSec", "OnUnitActiveSec", "OnUnitInactiveSec", "OnCalendar",
	"AccuracySec", "RandomizedDelaySec", "RandomizedOffsetSec", "FixedRandomDelay", "OnClockChange", "OnTimezoneChange",
	"Unit", "Persistent", "WakeSystem", "RemainAfterElapse", "DeferReactivation"}

// PrepareFix returns the change that puts the proposed fix fix (the text
// of the file path, from --with) in place of job for the B blocks,
// reading the host as it is now; it changes nothing. For a systemd
// timer, fix is a drop-in: its [Service] section makes it the timer's
// service's, its [Timer] section the timer's (checkDropIn). For a cron
// line, fix holds the one crontab line that replaces the job's line. A
// job no fix can be put in place for is a *CannotHoldError.
func PrepareFix(ctx context.Context, job timers.Job, path string, fix []byte, env Env, now time.Time) (Change, error) {
	switch job.Source {
	case timers.Cron:
		return prepareCronFix(job, path, fix, env.Root, now)
	case timers.Systemd:
		return prepareDropIn(ctx, job, path, fix, env, now)
	}
	_, err := Prepare(ctx, job, env, now) // the same refusal as holding it off
	if err == nil {
		err = fmt.Errorf("%s: no fix can be put in place for a %s job", job.Name, job.Source)
	}
	return Change{}, err
}

// prepareCronFix returns the change that replaces job's crontab line by
// the one job line of fix (blank and '#' lines aside).
func prepareCronFix(job timers.Job, path string, fix []byte, root string, now time.Time) (Change, error) {
	var repl string
	n := 0
	for i, l := range strings.Split(strings.TrimSuffix(string(fix), "\n"), "\n") {
		t := strings.TrimSpace(l)
		if t == "" || strings.HasPrefix(t, "#") {
			continue
		}
		if strings.HasPrefix(t, "[") {
			return Change{}, fmt.Errorf("%s:%d: a unit section %s, but %s is a cron line: give the crontab line that replaces it", path, i+1, t, job.Name)
		}
		if n > 0 {
			return Change{}, fmt.Errorf("%s:%d: a second line; for a cron job, --with takes the one crontab line that replaces line %d of %s (the first is line %d)", path, i+1, job.Line, job.File, n)
		}
		if err := timers.CheckCronLine(path, i+1, l, timers.SystemCrontab(job.File)); err != nil {
			return Change{}, err
		}
		repl, n = strings.TrimRight(l, "\r"), i+1
	}
	if n == 0 {
		return Change{}, fmt.Errorf("%s: no crontab line to put in place of %s", path, job.Name)
	}
	c, err := prepareCron(job, root, now)
	if err != nil {
		return Change{}, err
	}
	if repl == c.Original {
		return Change{}, fmt.Errorf("%s:%d: the same as line %d of %s: nothing would change", path, n, c.Line, c.File)
	}
	c.Held, c.Fix = repl, path
	return c, nil
}

// checkDropIn checks a drop-in for a timer job and says which of its
// units it is for: "Service" or "Timer". It takes [Unit] with either,
// refuses any other section, both, settings outside a section, lines
// that are no assignment and a [Timer] setting under [Service], each
// with path:line.
func checkDropIn(path string, b []byte) (string, error) {
	lines := strings.Split(strings.ReplaceAll(string(b), "\r\n", "\n"), "\n")
	var target string
	targetLine, section := 0, ""
	for i, l := range lines {
		t := strings.TrimSpace(l)
		if t == "" || t[0] == '#' || t[0] == ';' || (i > 0 && strings.HasSuffix(strings.TrimRight(lines[i-1], " \t"), "\\")) {
			continue
		}
		if t[0] == '[' {
			name, ok := strings.CutSuffix(t[1:], "]")
			switch {
			case !ok:
				return "", fmt.Errorf("%s:%d: section header without ']': %q", path, i+1, t)
			case name == "Unit":
			case name == "Service" || name == "Timer":
				if target != "" && target != name {
					return "", fmt.Errorf("%s:%d: [%s] after [%s] (line %d): one --with file goes to one unit; try the service's and the timer's changes in two runs", path, i+1, name, target, targetLine)
				}
				target, targetLine = name, i+1
			default:
				return "", fmt.Errorf("%s:%d: [%s]: a drop-in for a timer job takes [Service] (for its service) or [Timer] (for the timer), and [Unit]", path, i+1, name)
			}
			section = name
			continue
		}
		key, _, ok := strings.Cut(t, "=")
		key = strings.TrimSpace(key)
		switch {
		case section == "":
			return "", fmt.Errorf("%s:%d: a setting before any [Section]: %q", path, i+1, t)
		case !ok:
			return "", fmt.Errorf("%s:%d: not a KEY=VALUE setting: %q", path, i+1, t)
		case section == "Service" && slices.Contains(timerKeys, key):
			return "", fmt.Errorf("%s:%d: %s= is a [Timer] setting (systemd.timer(5)), not a [Service] one", path, i+1, key)
		}
	}
	if target == "" {
		return "", fmt.Errorf("%s: no [Service] or [Timer] section: nothing says whether it is for the service or the timer", path)
	}
	if _, err := unit.DeserializeSections(bytes.NewReader(b)); err != nil {
		return "", fmt.Errorf("%s: %w", path, err)
	}
	return target, nil
}

// prepareDropIn returns the change that installs fix as job's timer's or
// service's drop-in DropInName (checkDropIn decides which).
func prepareDropIn(ctx context.Context, job timers.Job, path string, fix []byte, env Env, now time.Time) (Change, error) {
	if userTimer(job) {
		return Change{}, &CannotHoldError{Culprit: job.Name, Why: "it is a user timer (systemctl --user)",
			Advice: "put the drop-in in ~" + job.User + "/.config/systemd/user/ and run systemctl --user daemon-reload as " + job.User + " for the B runs"}
	}
	section, err := checkDropIn(path, fix)
	if err != nil {
		return Change{}, err
	}
	target := job.Name
	if section == "Service" {
		target = job.Unit
		if target == "" {
			target = strings.TrimSuffix(job.Name, ".timer") + ".service"
		}
	}
	if _, err := withUnits(ctx, env, func(u UnitControl) (bool, error) { return isActive(ctx, u, target) }); err != nil {
		return Change{}, err
	}
	sysDir := filepath.Join(env.Root, dropInDir)
	if fi, err := os.Stat(sysDir); err != nil || !fi.IsDir() {
		return Change{}, fmt.Errorf("%s: no such folder for the drop-in", sysDir)
	}
	dir := filepath.Join(sysDir, target+".d")
	c := Change{Kind: KindDropIn, Job: job.Name, At: now, Unit: target, File: filepath.Join(dir, DropInName), Content: string(fix), Fix: path}
	if _, err := os.Lstat(c.File); err == nil {
		return Change{}, fmt.Errorf("%s: already there; a killed run's? memdiag confirm --restore removes what its state file lists, or remove it by hand", c.File)
	}
	if _, err := os.Lstat(dir); errors.Is(err, fs.ErrNotExist) {
		c.MadeDir = dir
	}
	return c, nil
}

// applyDropIn writes the drop-in (a temporary beside it, which systemd
// ignores as it does not end in .conf, fsynced and renamed), reloads
// systemd (Reload over D-Bus, as systemctl daemon-reload) and checks
// that systemd lists it in the unit's DropInPaths. Nothing is restarted:
// a [Service] change applies from the service's next start, and a
// [Timer] change at the reload, as systemd re-arms a waiting timer from
// its reloaded settings (src/core/timer.c, timer_coldplug calls
// timer_enter_waiting).
func applyDropIn(ctx context.Context, c Change, env Env) error {
	if c.MadeDir != "" {
		if err := os.Mkdir(c.MadeDir, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
			return err
		}
	}
	if _, err := os.Lstat(c.File); err == nil {
		return fmt.Errorf("%s: already there; memdiag installs only a drop-in it creates", c.File)
	}
	tmp := c.File + ".tmp"
	if err := os.WriteFile(tmp, []byte(c.Content), 0o644); err != nil {
		return err
	}
	if err := os.Chmod(tmp, 0o644); err != nil { // umask
		return err
	}
	if err := syncFile(tmp); err != nil {
		return err
	}
	if err := os.Rename(tmp, c.File); err != nil {
		return err
	}
	return reloadAndCheck(ctx, c, env, true)
}

// undoDropIn removes the drop-in if it is still memdiag's (the same
// bytes), and the folder if memdiag made it and it is empty, then
// reloads systemd and checks that the unit no longer lists it. It
// always reloads: a run killed between removing and reloading left
// systemd with the drop-in still loaded.
func undoDropIn(ctx context.Context, c Change, env Env) error {
	_ = os.Remove(c.File + ".tmp")
	b, err := os.ReadFile(c.File)
	switch {
	case err == nil && string(b) != c.Content:
		return fmt.Errorf("%s: changed since memdiag wrote it; remove it by hand and run systemctl daemon-reload", c.File)
	case err == nil:
		if err := os.Remove(c.File); err != nil {
			return err
		}
	case !errors.Is(err, fs.ErrNotExist):
		return err
	}
	if c.MadeDir != "" {
		if err := os.Remove(c.MadeDir); err != nil && !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ENOTEMPTY) && !errors.Is(err, syscall.EEXIST) {
			return err
		}
	}
	return reloadAndCheck(ctx, c, env, false)
}

// reloadAndCheck reloads systemd and checks that c.Unit's DropInPaths
// lists c.File (want) or does not.
func reloadAndCheck(ctx context.Context, c Change, env Env, want bool) error {
	_, err := withUnits(ctx, env, func(u UnitControl) (bool, error) {
		if err := u.ReloadContext(ctx); err != nil {
			return false, fmt.Errorf("systemctl daemon-reload: %w", err)
		}
		p, err := u.GetUnitPropertyContext(ctx, c.Unit, "DropInPaths")
		if err != nil {
			return false, fmt.Errorf("%s: DropInPaths: %w", c.Unit, err)
		}
		paths, _ := p.Value.Value().([]string)
		live := filepath.Join("/", strings.TrimPrefix(c.File, filepath.Clean(env.Root)))
		if has := slices.Contains(paths, live); has != want {
			verb := "did not load"
			if !want {
				verb = "still lists"
			}
			return false, fmt.Errorf("%s: systemd %s %s after daemon-reload (DropInPaths: %s)", c.Unit, verb, live, strings.Join(paths, " "))
		}
		return true, nil
	})
	return err
}

// PrepareAll returns what B blocks change for each job, reading the host
// as it is now; it changes nothing. With fixPath "" each job is held off
// (Prepare); otherwise the file fixPath (--with) is the fix put in place
// of each (PrepareFix). The changes prepared before an error are returned
// with it.
func PrepareAll(ctx context.Context, jobs []timers.Job, fixPath string, env Env, now time.Time) ([]Change, error) {
	var fix []byte
	if fixPath != "" {
		var err error
		if fix, err = rootfs.ReadPath(ctx, fixPath, rootfs.DefaultLimit); err != nil {
			return nil, &rootfs.NamedError{Flag: "--with", Path: fixPath, Err: err}
		}
	}
	var changes []Change
	for _, job := range jobs {
		var change Change
		var err error
		if fixPath == "" {
			change, err = Prepare(ctx, job, env, now)
		} else {
			change, err = PrepareFix(ctx, job, fixPath, fix, env, now)
		}
		if err != nil {
			return changes, err
		}
		changes = append(changes, change)
	}
	return changes, nil
}
