package psi

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/memdiag/memdiag/internal/fixtures"
)

func us(n int64) time.Duration { return time.Duration(n) * time.Microsecond }

// captureTime reads a fixture's TIME file: CLOCK_REALTIME in ns, taken just
// before proc/pressure was copied (testdata/capture-proc.sh).
func captureTime(t *testing.T, fixture string) time.Time {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(fixtures.Root(t, fixture), "TIME"))
	if err != nil {
		t.Fatal(err)
	}
	ns, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return time.Unix(0, ns)
}

func collect(t *testing.T, fixture string) Snapshot {
	t.Helper()
	c, err := NewCollector(fixtures.Proc(t, fixture))
	if err != nil {
		t.Fatal(err)
	}
	s, missing, err := c.Collect(context.Background())
	if err != nil || len(missing) != 0 {
		t.Fatalf("Collect() = missing %v, err %v; want neither", missing, err)
	}
	return s
}

// cgroupDir is the cgroup v2 group of the hog in a fixture tree.
func cgroupDir(t *testing.T, fixture string) string {
	return filepath.Join(fixtures.Root(t, fixture), "sys/fs/cgroup/unified/lru-fixture")
}

// Values copied by hand from testdata/linux-6.18/proc/pressure/*.
func TestCollectHost(t *testing.T) {
	want := Snapshot{
		Memory: &Resource{
			Some: Line{Avg10: 0, Avg60: 0, Avg300: 0, Total: us(104492)},
			Full: &Line{Avg10: 0, Avg60: 0, Avg300: 0, Total: us(87510)},
		},
		IO: &Resource{
			Some: Line{Avg10: 6.44, Avg60: 1.56, Avg300: 0.45, Total: us(2695959)},
			Full: &Line{Avg10: 5.24, Avg60: 1.27, Avg300: 0.35, Total: us(2189415)},
		},
		// Since 5.13 cpu has a "full" line, all zeros at the host level.
		CPU: &Resource{
			Some: Line{Avg10: 17.28, Avg60: 6.35, Avg300: 3.01, Total: us(15739504)},
			Full: &Line{},
		},
	}
	if diff := cmp.Diff(want, collect(t, "linux-6.18")); diff != "" {
		t.Errorf("Collect() mismatch (-want +got):\n%s", diff)
	}
}

// Between the two hog captures, 1.151581560 s apart, host memory "some"
// total rose from 411329 to 641648 µs and "full" from 223741 to 408339 µs.
func TestStallShareBetweenHogCaptures(t *testing.T) {
	dt := captureTime(t, "linux-6.18-hog-t1").Sub(captureTime(t, "linux-6.18-hog-t0"))
	if dt != 1151581560*time.Nanosecond {
		t.Fatalf("dt = %v, want 1.15158156s from the TIME files", dt)
	}
	s0, s1 := collect(t, "linux-6.18-hog-t0"), collect(t, "linux-6.18-hog-t1")

	tests := []struct {
		name      string
		prev, cur Line
		want      float64
	}{
		{"memory some", s0.Memory.Some, s1.Memory.Some, float64((641648-411329)*1000) / 1151581560},   // 0.2000023
		{"memory full", *s0.Memory.Full, *s1.Memory.Full, float64((408339-223741)*1000) / 1151581560}, // 0.1602995
		{"io some", s0.IO.Some, s1.IO.Some, float64((4046578-4045824)*1000) / 1151581560},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := StallShare(tt.prev, tt.cur, dt)
			if !ok || got != tt.want {
				t.Errorf("StallShare = %v, %v; want %v, true", got, ok, tt.want)
			}
		})
	}
	if got, _ := StallShare(s0.Memory.Some, s1.Memory.Some, dt); got < 0.2 || got > 0.2001 {
		t.Errorf("memory some share = %v, want about 20 %%", got)
	}
}

// The hog's cgroup v2 group on a hybrid host: *.pressure files exist even
// though its memory limit came from a v1 group. Values from
// testdata/linux-6.18-hog-*/sys/fs/cgroup/unified/lru-fixture/.
func TestCollectCgroupV2(t *testing.T) {
	read := func(fixture string) Snapshot {
		t.Helper()
		c, err := NewCollector(fixtures.Proc(t, fixture), WithCgroup(cgroupDir(t, fixture)))
		if err != nil {
			t.Fatal(err)
		}
		cg, missing, ok, err := c.CollectCgroup(context.Background())
		if err != nil || !ok || len(missing) != 0 {
			t.Fatalf("CollectCgroup() = ok %v, missing %v, err %v", ok, missing, err)
		}
		return cg
	}
	got0 := read("linux-6.18-hog-t0")
	want0 := Snapshot{
		Memory: &Resource{Some: Line{Total: us(439031)}, Full: &Line{Total: us(439031)}},
		IO:     &Resource{Some: Line{Total: us(91638)}, Full: &Line{Total: us(91638)}},
		CPU:    &Resource{Some: Line{Total: us(201531)}, Full: &Line{Total: us(201527)}},
	}
	if diff := cmp.Diff(want0, got0); diff != "" {
		t.Errorf("CollectCgroup(t0) mismatch (-want +got):\n%s", diff)
	}
	got1 := read("linux-6.18-hog-t1")
	wantMem1 := &Resource{
		Some: Line{Avg10: 5.97, Avg60: 1.07, Avg300: 0.22, Total: us(813042)},
		Full: &Line{Avg10: 5.97, Avg60: 1.07, Avg300: 0.22, Total: us(813042)},
	}
	if diff := cmp.Diff(wantMem1, got1.Memory); diff != "" {
		t.Errorf("CollectCgroup(t1).Memory mismatch (-want +got):\n%s", diff)
	}
	// The group's files were copied a few ms after TIME in each capture;
	// the share uses the TIME interval, as a recording would use its
	// sample times.
	dt := captureTime(t, "linux-6.18-hog-t1").Sub(captureTime(t, "linux-6.18-hog-t0"))
	got, ok := StallShare(got0.Memory.Some, got1.Memory.Some, dt)
	if want := float64((813042-439031)*1000) / 1151581560; !ok || got != want { // 0.3247803
		t.Errorf("cgroup memory some share = %v, %v; want %v, true", got, ok, want)
	}
}

// A tree without proc/pressure (no CONFIG_PSI): every resource is missing
// with an *UnavailableError, nothing else fails.
func TestCollectWithoutPressure(t *testing.T) {
	proc := fixtures.Proc(t, "linux-6.18-nopsi")
	c, err := NewCollector(proc)
	if err != nil {
		t.Fatal(err)
	}
	s, missing, err := c.Collect(context.Background())
	if err != nil {
		t.Fatalf("Collect() error = %v, want nil", err)
	}
	if diff := cmp.Diff(Snapshot{}, s); diff != "" {
		t.Errorf("Collect() snapshot not empty (-want +got):\n%s", diff)
	}
	if len(missing) != 3 {
		t.Fatalf("missing = %v, want one error per resource", missing)
	}
	for i, res := range Resources {
		var ue *UnavailableError
		if !errors.As(missing[i], &ue) {
			t.Fatalf("missing[%d] = %T %v, want *UnavailableError", i, missing[i], missing[i])
		}
		if want := filepath.Join(proc, "pressure", res); ue.Path != want {
			t.Errorf("missing[%d].Path = %q, want %q", i, ue.Path, want)
		}
		if !errors.Is(ue, os.ErrNotExist) || !strings.Contains(ue.Need, "CONFIG_PSI") || !strings.Contains(ue.Hint, "psi=0") {
			t.Errorf("missing[%d] = %v; want ErrNotExist naming CONFIG_PSI and psi=0", i, ue)
		}
	}
}

// The hog's cgroup v1 memory group has cgroup.procs but no memory.pressure.
func TestCgroupV1IsUnavailable(t *testing.T) {
	dir := filepath.Join(fixtures.Root(t, "linux-6.18-hog-t0"), "sys/fs/cgroup/memory/lru-fixture")
	_, err := NewCollector(fixtures.Proc(t, "linux-6.18-hog-t0"), WithCgroup(dir))
	var ue *UnavailableError
	if !errors.As(err, &ue) {
		t.Fatalf("NewCollector(v1 group) error = %T %v, want *UnavailableError", err, err)
	}
	if ue.Path != filepath.Join(dir, "memory.pressure") || !strings.Contains(ue.Need, "cgroup v2") {
		t.Errorf("error = %+v; want Path <dir>/memory.pressure and Need naming cgroup v2", ue)
	}
	if err := CheckCgroup(cgroupDir(t, "linux-6.18-hog-t0")); err != nil {
		t.Errorf("CheckCgroup(v2 group) = %v, want nil", err)
	}
	err = CheckCgroup(t.TempDir())
	if !errors.As(err, &ue) || !strings.Contains(ue.Need, "not a cgroup directory") {
		t.Errorf("CheckCgroup(empty dir) = %v, want *UnavailableError \"not a cgroup directory\"", err)
	}
	// A group that does not exist (the v1-style path on a hybrid host,
	// the new-user trial of 2026-12-06) says so, and where v2 groups are.
	err = CheckCgroup(filepath.Join(t.TempDir(), "system.slice", "web.service"))
	if !errors.As(err, &ue) || ue.Need != "no such cgroup" || !strings.Contains(ue.Hint, "/sys/fs/cgroup/unified/") || !strings.Contains(ue.Hint, "system.slice/web.service") {
		t.Errorf("CheckCgroup(missing dir) = %v, want \"no such cgroup\" with where v2 groups are", err)
	}
}

func TestReadFileErrors(t *testing.T) {
	tests := []struct {
		name, content, want string // want: error text after "<path>"
	}{
		{"bad total", "some avg10=0.00 avg60=0.00 avg300=0.00 total=104492\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=x\n",
			`:2: malformed PSI line: "full avg10=0.00 avg60=0.00 avg300=0.00 total=x": total: `},
		{"field without =", "some avg10=0.00 avg60 avg300=0.00 total=1\n",
			`:1: malformed PSI line: "some avg10=0.00 avg60 avg300=0.00 total=1": field "avg60" has no '='`},
		{"missing field", "some avg10=0.00 avg60=0.00 total=1\n",
			`:1: malformed PSI line: "some avg10=0.00 avg60=0.00 total=1": want avg10, avg60, avg300 and total, found 3 of them`},
		{"no some line", "full avg10=0.00 avg60=0.00 avg300=0.00 total=1\n",
			`: malformed PSI line: no "some" line`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "memory")
			if err := os.WriteFile(path, []byte(tt.content), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := ReadFile(path)
			if err == nil || !strings.HasPrefix(err.Error(), path+tt.want) {
				t.Errorf("ReadFile error = %v\nwant prefix %q", err, path+tt.want)
			}
			if !errors.Is(err, errParse) {
				t.Errorf("error does not wrap errParse")
			}
		})
	}
}

func TestStallShareUnknown(t *testing.T) {
	a, b := Line{Total: us(5000)}, Line{Total: us(4000)}
	if s, ok := StallShare(a, b, time.Second); ok {
		t.Errorf("total went backwards: StallShare = %v, true; want ok=false", s)
	}
	if s, ok := StallShare(b, a, 0); ok {
		t.Errorf("dt=0: StallShare = %v, true; want ok=false", s)
	}
	// 1.5 s of stall in 1 s (read/timestamp jitter) is capped at 1.
	if s, ok := StallShare(Line{}, Line{Total: 1500 * time.Millisecond}, time.Second); !ok || s != 1 {
		t.Errorf("StallShare over 1 = %v, %v; want 1, true", s, ok)
	}
}

// Totals go to JSON in µs, the kernel's unit, and come back unchanged.
func TestLineJSON(t *testing.T) {
	s := collect(t, "linux-6.18-hog-t1")
	b, err := json.Marshal(s.Memory)
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"some":{"avg10":3.62,"avg60":0.65,"avg300":0.13,"total_us":641648},"full":{"avg10":1.63,"avg60":0.29,"avg300":0.06,"total_us":408339}}`
	if string(b) != want {
		t.Errorf("json = %s\nwant   %s", b, want)
	}
	var back Resource
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(s.Memory, &back); diff != "" {
		t.Errorf("round trip mismatch (-want +got):\n%s", diff)
	}
}
