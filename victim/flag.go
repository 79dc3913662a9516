package victim

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/memdiag/memdiag/cgroupfs"
	"github.com/memdiag/memdiag/process"
	"github.com/memdiag/memdiag/record"
)

// Flag kinds, what a --victim value names (ParseFlag).
const (
	FlagPID    = "pid"
	FlagUnit   = "unit"
	FlagCgroup = "cgroup"
)

// unitSuffixes are the unit types whose cgroups --victim can name
// (systemd.unit(5)).
var unitSuffixes = []string{".service", ".scope", ".slice", ".socket"}

// ParseFlag says what a --victim value names: all digits a PID, a name
// ending in .service, .scope, .slice or .socket (no '/') a systemd unit,
// anything else a cgroup path. An empty value or PID 0 is an error
// wrapping ErrBadFlag.
func ParseFlag(value string) (kind string, pid int, err error) {
	v := strings.TrimSpace(value)
	switch {
	case v == "":
		return "", 0, fmt.Errorf("%w: empty; want PID, UNIT or CGROUP", ErrBadFlag)
	case strings.Trim(v, "0123456789") == "":
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			return "", 0, fmt.Errorf("%w: %q is not a PID", ErrBadFlag, value)
		}
		return FlagPID, n, nil
	case !strings.Contains(v, "/"):
		for _, s := range unitSuffixes {
			if len(v) > len(s) && strings.HasSuffix(v, s) {
				return FlagUnit, 0, nil
			}
		}
	}
	return FlagCgroup, 0, nil
}

// FromFlag finds the victim a --victim value names: a PID (FromPID), a
// systemd unit (its group, found by name in the v2 and v1 memory
// hierarchies), or a cgroup (an absolute directory, or a group path
// below the cgroup2 mount: cgroupfs.Resolve, as --cgroup). Every error
// wraps ErrBadFlag: the value names nothing usable here.
func (f *Finder) FromFlag(value string) (*record.Victim, error) {
	kind, pid, err := ParseFlag(value)
	if err != nil {
		return nil, err
	}
	var v *record.Victim
	switch kind {
	case FlagPID:
		v, err = f.FromPID(pid, record.VictimGiven)
	case FlagUnit:
		v, err = f.fromUnit(value)
	default:
		v, err = f.fromCgroup(value)
	}
	if err != nil {
		return nil, fmt.Errorf("%w %s: %w", ErrBadFlag, value, err)
	}
	if v.Detail == "" {
		v.Detail = "given as --victim " + value
	}
	return v, nil
}

// fromUnit finds the unit's group in each hierarchy by directory name.
func (f *Finder) fromUnit(name string) (*record.Victim, error) {
	m := f.o.Mounts
	v := &record.Victim{How: record.VictimGiven, Unit: name}
	for _, h := range []struct {
		mount string
		path  *string
	}{{m.Unified, &v.Cgroup}, {m.Memory, &v.Memcg}} {
		if h.mount == "" {
			continue
		}
		base := filepath.Join(m.Root, h.mount)
		dirs, err := findDirs(base, name)
		if err != nil {
			return nil, err
		}
		if len(dirs) > 1 {
			return nil, &AmbiguousError{Name: name, Matches: dirs}
		}
		if len(dirs) == 1 {
			*h.path, _ = cgroupfs.Rel(m.Root, h.mount, dirs[0])
		}
	}
	if v.Cgroup == "" && v.Memcg == "" {
		return nil, &NotFoundError{What: name, Why: "no cgroup of that name under " + strings.Join(m.Mounted(), " or "),
			Hint: "is the unit running? give its PID or cgroup instead"}
	}
	if m.Memory == "" {
		v.Memcg = v.Cgroup
	}
	f.hierarchyDirs(v, m.Memory != "")
	return v, nil
}

// findDirs lists the directories named name below base (cgroup
// hierarchies hold no symlinks).
func findDirs(base, name string) ([]string, error) {
	var out []string
	err := filepath.WalkDir(base, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p != base && gone(err) {
				return nil // a group removed while walked
			}
			return err
		}
		if d.IsDir() && d.Name() == name && p != base {
			out = append(out, p)
			return fs.SkipDir
		}
		return nil
	})
	return out, err
}

// fromCgroup takes a cgroup directory, or a group path below the cgroup2
// mount, as the victim's group; on a hybrid host its memory group is the
// v1 memory controller's group of the same path.
func (f *Finder) fromCgroup(value string) (*record.Victim, error) {
	m := f.o.Mounts
	dir := cgroupfs.Resolve(m.Root, m, value)
	if !isDir(dir) {
		return nil, &NotFoundError{What: dir, Why: "no such cgroup directory",
			Hint: "give a directory under " + strings.Join(m.Mounted(), " or ") + ", or a path relative to the cgroup2 mount"}
	}
	v := &record.Victim{How: record.VictimGiven}
	memV1 := false
	if p, ok := cgroupfs.Rel(m.Root, m.Unified, dir); ok {
		v.Cgroup = p
		v.Memcg = p // the memory group of the same path, v1 on hybrid hosts
		memV1 = m.Memory != ""
	} else if p, ok := cgroupfs.Rel(m.Root, m.Memory, dir); ok {
		v.Memcg, memV1 = p, true
		if m.Unified != "" {
			v.Cgroup = p // its v2 twin, when it has one
		}
	} else {
		return nil, &NotFoundError{What: dir, Why: "not under a cgroup mount (" + strings.Join(m.Mounted(), ", ") + ")"}
	}
	v.Unit = unitOf(v.Cgroup, v.Memcg)
	f.hierarchyDirs(v, memV1)
	if v.CgroupDir == "" {
		v.Cgroup = ""
	}
	return v, nil
}

// unitOf is the systemd unit of the first group path that names one.
func unitOf(paths ...string) string {
	for _, p := range paths {
		if p == "" {
			continue
		}
		if _, u := process.ParseCgroupFile([]byte("0::" + p + "\n")); u != "" {
			return u
		}
	}
	return ""
}

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}
