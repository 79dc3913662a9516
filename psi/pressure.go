// Package psi reads Linux pressure stall information (PSI) for the host
// (/proc/pressure/{memory,io,cpu}) and for one cgroup v2 group
// (<group>/{memory,io,cpu}.pressure).
//
// A PSI file has one or two lines:
//
//	some avg10=0.00 avg60=0.12 avg300=0.05 total=114516
//	full avg10=0.00 avg60=0.00 avg300=0.00 total=87510
//
// "some" is the share of wall time in which at least one task stalled on the
// resource, "full" the share in which all non-idle tasks stalled at once.
// avg10/60/300 are the kernel's exponentially weighted averages in percent;
// total is the cumulative stall time in microseconds. Stall share over an
// interval must come from the delta of total ([StallShare]), not from the
// averages, so it can be re-derived from a recording.
//
// Source: https://docs.kernel.org/accounting/psi.html
//
// The parser is our own rather than procfs's PSIStatsForResource because it
// must also read cgroup v2 *.pressure files, which procfs does not, and it
// names the file and line of bad input and checks the scanner's error.
//
// [OnsetWatcher] reports when a stall starts, to the millisecond: with a
// kernel PSI trigger where the kernel allows one, else by polling total.
package psi

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	gojson "github.com/goccy/go-json"

	"github.com/memdiag/memdiag/internal/hostenv"
	"github.com/memdiag/memdiag/internal/rootfs"
)

// errParse is wrapped by every parse error of this package.
var errParse = errors.New("malformed PSI line")

// Resources lists the PSI resources in the order they are read.
var Resources = []string{"memory", "io", "cpu"}

// Line is one line of a PSI file ("some avg10=0.12 avg60=… total=123456").
// Source: /proc/pressure/{memory,io,cpu} and cgroup v2 <group>/*.pressure;
// https://docs.kernel.org/accounting/psi.html
type Line struct {
	Avg10  float64       // percent of wall time; kernel EWMA over 10 s
	Avg60  float64       // percent of wall time; kernel EWMA over 60 s
	Avg300 float64       // percent of wall time; kernel EWMA over 300 s
	Total  time.Duration // cumulative stall time; the file reports µs
}

type lineJSON struct {
	Avg10   float64 `json:"avg10"`
	Avg60   float64 `json:"avg60"`
	Avg300  float64 `json:"avg300"`
	TotalUS int64   `json:"total_us"`
}

// MarshalJSON writes the line with its total in µs ("total_us"), the unit
// the kernel reports.
func (l Line) MarshalJSON() ([]byte, error) {
	return json.Marshal(lineJSON{l.Avg10, l.Avg60, l.Avg300, l.Total.Microseconds()})
}

// UnmarshalJSON reads what MarshalJSON writes. It decodes with
// github.com/goccy/go-json, the recording reader's decoder: six lines a
// sample, with encoding/json they were ~40 % of the time `analyze` spent
// decoding a recording.
func (l *Line) UnmarshalJSON(b []byte) error {
	var j lineJSON
	if err := gojson.Unmarshal(b, &j); err != nil {
		return err
	}
	*l = Line{j.Avg10, j.Avg60, j.Avg300, time.Duration(j.TotalUS) * time.Microsecond}
	return nil
}

// Resource is the content of one PSI file. Full is nil where the kernel
// does not report it (cpu before 5.13 has no "full" line).
type Resource struct {
	Some Line  `json:"some"`
	Full *Line `json:"full,omitempty"`
}

// Snapshot is one read of the PSI files of a scope (host or cgroup). A
// resource the kernel lacks is nil.
type Snapshot struct {
	Memory *Resource `json:"memory,omitempty"`
	IO     *Resource `json:"io,omitempty"`
	CPU    *Resource `json:"cpu,omitempty"`
}

// Get returns the resource by name ("memory", "io", "cpu"), or nil.
func (s *Snapshot) Get(resource string) *Resource {
	if s == nil {
		return nil
	}
	switch resource {
	case "memory":
		return s.Memory
	case "io":
		return s.IO
	case "cpu":
		return s.CPU
	}
	return nil
}

// Set stores r as the resource named ("memory", "io", "cpu"); another
// name is ignored.
func (s *Snapshot) Set(resource string, r *Resource) {
	switch resource {
	case "memory":
		s.Memory = r
	case "io":
		s.IO = r
	case "cpu":
		s.CPU = r
	}
}

// UnavailableError says a kernel feature memdiag needs is absent, and what
// to do about it: memdiag's one [hostenv.Unavailable].
type UnavailableError = hostenv.Unavailable

// Collector reads PSI for the host and, optionally, one cgroup v2 group.
type Collector struct {
	procRoot  string
	cgroupDir string
}

// Option configures a Collector.
type Option func(*Collector)

// WithCgroup makes the collector also read <dir>/{memory,io,cpu}.pressure,
// where dir is a cgroup v2 directory (e.g. /sys/fs/cgroup/system.slice/x.service).
func WithCgroup(dir string) Option { return func(c *Collector) { c.cgroupDir = dir } }

// NewCollector returns a Collector reading <procRoot>/pressure/*.
// It fails only if procRoot is not a readable directory. A cgroup given
// with [WithCgroup] that is not a cgroup v2 directory with PSI files is an
// *UnavailableError.
func NewCollector(procRoot string, opts ...Option) (*Collector, error) {
	if err := hostenv.CheckProc(procRoot); err != nil {
		return nil, err
	}
	c := &Collector{procRoot: procRoot}
	for _, o := range opts {
		o(c)
	}
	if c.cgroupDir != "" {
		if err := CheckCgroup(c.cgroupDir); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// CheckCgroup reports whether dir is a cgroup v2 directory with PSI files.
// A cgroup v1 directory (it has cgroup.procs but no *.pressure) yields an
// *UnavailableError saying per-cgroup PSI needs cgroup v2.
func CheckCgroup(dir string) error {
	if _, err := os.Stat(filepath.Join(dir, "memory.pressure")); err == nil {
		return nil
	} else if !errors.Is(err, os.ErrNotExist) {
		return err
	}
	if _, err := os.Stat(filepath.Join(dir, "cgroup.procs")); err == nil {
		return &UnavailableError{
			Path: filepath.Join(dir, "memory.pressure"),
			Need: "per-cgroup PSI needs cgroup v2; this is a cgroup v1 directory",
			Hint: "pass the group's path in the v2 hierarchy (e.g. /sys/fs/cgroup/unified/... on hybrid hosts) or boot with systemd.unified_cgroup_hierarchy=1",
			Err:  os.ErrNotExist,
		}
	}
	if _, err := os.Stat(dir); errors.Is(err, os.ErrNotExist) {
		return &UnavailableError{
			Path: dir, Need: "no such cgroup",
			Hint: "give the group's directory in the cgroup v2 hierarchy (/sys/fs/cgroup/... on a pure v2 host, /sys/fs/cgroup/unified/... on a hybrid one; see `mount -t cgroup2`) or its path below that mount, such as system.slice/web.service",
			Err:  os.ErrNotExist,
		}
	}
	return &UnavailableError{
		Path: dir, Need: "not a cgroup directory",
		Hint: "give the cgroup's directory under /sys/fs/cgroup", Err: os.ErrNotExist,
	}
}

// Collect reads the host's PSI files once. Resources the kernel lacks are
// nil in the Snapshot and described in missing (each an *UnavailableError);
// only an unexpected read or parse failure is returned as err.
func (c *Collector) Collect(ctx context.Context) (host Snapshot, missing []error, err error) {
	return collectDir(filepath.Join(c.procRoot, "pressure"), func(r string) string { return r })
}

// CollectCgroup reads the cgroup's *.pressure files once; ok is false when
// the collector has no cgroup.
func (c *Collector) CollectCgroup(ctx context.Context) (cg Snapshot, missing []error, ok bool, err error) {
	if c.cgroupDir == "" {
		return Snapshot{}, nil, false, nil
	}
	cg, missing, err = collectDir(c.cgroupDir, func(r string) string { return r + ".pressure" })
	return cg, missing, true, err
}

// CgroupDir returns the cgroup directory read by CollectCgroup, or "".
func (c *Collector) CgroupDir() string { return c.cgroupDir }

func collectDir(dir string, name func(string) string) (Snapshot, []error, error) {
	var s Snapshot
	var missing []error
	for _, res := range Resources {
		p := filepath.Join(dir, name(res))
		r, err := ReadFile(p)
		if err != nil {
			var ue *UnavailableError
			if errors.As(err, &ue) {
				missing = append(missing, err)
				continue
			}
			return s, missing, err
		}
		s.Set(res, &r)
	}
	return s, missing, nil
}

// ReadFile reads one PSI file. A file that does not exist is an
// *UnavailableError (kernel before 4.20 or without CONFIG_PSI); EOPNOTSUPP
// on read is an *UnavailableError too (CONFIG_PSI_DEFAULT_DISABLED or
// booted with psi=0).
func ReadFile(path string) (Resource, error) {
	f, err := rootfs.OpenPath(path) // regular files only, never blocking

	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return Resource{}, &UnavailableError{
				Path: path,
				Need: "pressure stall information (kernel >= 4.20 with CONFIG_PSI=y)",
				Hint: "upgrade the kernel, or if it was booted with psi=0 remove that parameter",
				Err:  err,
			}
		}
		return Resource{}, err
	}
	defer f.Close()
	r, err := parse(io.LimitReader(f, rootfs.ProcLimit), path)
	if err != nil && errors.Is(err, syscall.EOPNOTSUPP) {
		return Resource{}, &UnavailableError{
			Path: path,
			Need: "PSI is compiled in but disabled (CONFIG_PSI_DEFAULT_DISABLED or psi=0)",
			Hint: "boot with psi=1 on the kernel command line",
			Err:  err,
		}
	}
	return r, err
}

// parse reads the some/full lines of a PSI file; path is used only in
// error messages ("path:line: ...").
func parse(r io.Reader, path string) (Resource, error) {
	var res Resource
	sc := bufio.NewScanner(r)
	n, seenSome := 0, false
	for sc.Scan() {
		n++
		text := strings.TrimSpace(sc.Text())
		if text == "" {
			continue
		}
		kind, rest, _ := strings.Cut(text, " ")
		l, err := parseLine(rest)
		if err != nil {
			return Resource{}, fmt.Errorf("%s:%d: %w: %q: %w", path, n, errParse, text, err)
		}
		switch kind {
		case "some":
			res.Some, seenSome = l, true
		case "full":
			l := l
			res.Full = &l
		default:
			// Unknown kinds are ignored: future kernels may add lines.
		}
	}
	if err := sc.Err(); err != nil {
		return Resource{}, fmt.Errorf("%s: %w", path, err)
	}
	if !seenSome {
		return Resource{}, fmt.Errorf("%s: %w: no \"some\" line", path, errParse)
	}
	return res, nil
}

func parseLine(s string) (Line, error) {
	var l Line
	seen := 0
	for _, f := range strings.Fields(s) {
		k, v, ok := strings.Cut(f, "=")
		if !ok {
			return l, fmt.Errorf("field %q has no '='", f)
		}
		switch k {
		case "avg10", "avg60", "avg300":
			x, err := strconv.ParseFloat(v, 64)
			if err != nil {
				return l, fmt.Errorf("%s: %w", k, err)
			}
			// A share of wall time in percent (kernel/sched/psi.c
			// LOAD_INT/LOAD_FRAC); NaN or Inf would poison every mean.
			if math.IsNaN(x) || x < 0 || x > 100 {
				return l, fmt.Errorf("%s=%s: want a percentage 0-100", k, v)
			}
			switch k {
			case "avg10":
				l.Avg10 = x
			case "avg60":
				l.Avg60 = x
			default:
				l.Avg300 = x
			}
			seen++
		case "total":
			x, err := strconv.ParseUint(v, 10, 64)
			if err != nil {
				return l, fmt.Errorf("total: %w", err)
			}
			if x > math.MaxInt64/uint64(time.Microsecond) {
				return l, fmt.Errorf("total=%s µs: past 292 years, more than a Duration holds", v)
			}
			l.Total = time.Duration(x) * time.Microsecond
			seen++
		}
	}
	if seen != 4 {
		return l, fmt.Errorf("want avg10, avg60, avg300 and total, found %d of them", seen)
	}
	return l, nil
}

// StallShare is the share of wall time (0..1) stalled between two reads of
// the same line: Δtotal / Δwall. It returns ok=false when dt is not
// positive or total went backwards (counter reset, a different scope), so a
// caller never sees a negative or huge share; the result is capped at 1 to
// absorb clock jitter between the read and the timestamp.
func StallShare(prev, cur Line, dt time.Duration) (share float64, ok bool) {
	if dt <= 0 || cur.Total < prev.Total {
		return 0, false
	}
	s := float64(cur.Total-prev.Total) / float64(dt)
	if s > 1 {
		s = 1
	}
	return s, true
}
