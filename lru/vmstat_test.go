package lru

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Values read by hand from each fixture's proc/vmstat; sums are of the
// per-zone lines named in the comments.
func TestVMStat(t *testing.T) {
	tests := []struct {
		fixture string
		want    *VMStat
	}{
		// 6.18: ≥ 5.9 names; all counters present.
		{"linux-6.18", &VMStat{
			PgscanKswapd: u(0), PgscanDirect: u(0), PgstealKswapd: u(0), PgstealDirect: u(0),
			PgscanAnon: u(0), PgscanFile: u(282123), PgstealAnon: u(0), PgstealFile: u(229351),
			WorkingsetRefaultFile: u(197274), WorkingsetRefaultAnon: u(0),
			WorkingsetActivate: u(21464 + 0), // workingset_activate_file + _anon
			WorkingsetRestore:  u(0 + 0),     // workingset_restore_file + _anon
			Pgmajfault:         u(1177),
			Allocstall:         u(0), // allocstall_{dma,dma32,normal,movable,device}, all 0
			OOMKill:            u(0), Pswpin: u(0), Pswpout: u(0),
		}},
		// 6.18 during the hog (cgroup limit reclaim: only pgscan_anon/_file move).
		{"linux-6.18-hog-t1", &VMStat{
			PgscanKswapd: u(0), PgscanDirect: u(0), PgstealKswapd: u(0), PgstealDirect: u(0),
			PgscanAnon: u(182548), PgscanFile: u(537355), PgstealAnon: u(67092), PgstealFile: u(382951),
			WorkingsetRefaultFile: u(277398), WorkingsetRefaultAnon: u(1601),
			WorkingsetActivate: u(23732 + 0),
			WorkingsetRestore:  u(0 + 0),
			Pgmajfault:         u(1467), Allocstall: u(0), OOMKill: u(1),
			Pswpin: u(68), Pswpout: u(32945),
		}},
		// 4.13: workingset_refault without _file, no anon refaults,
		// allocstall per zone, pgscan without zones, oom_kill present.
		{"ubuntu-17.10-linux-4.13", &VMStat{
			PgscanKswapd: u(3868525), PgscanDirect: u(1483),
			PgstealKswapd: u(3798890), PgstealDirect: u(1466),
			WorkingsetRefaultFile: u(302914),
			WorkingsetActivate:    u(108959),
			Pgmajfault:            u(19204),
			Allocstall:            u(0 + 0 + 5 + 8), // allocstall_dma, _dma32, _normal, _movable
			OOMKill:               u(0), Pswpin: u(0), Pswpout: u(0),
		}},
		// 3.15 - 4.4: per-zone pgscan/pgsteal, one allocstall, no oom_kill.
		{"linux-3.x-goprocinfo", &VMStat{
			PgscanKswapd:          u(0 + 39873849 + 74118549 + 0), // pgscan_kswapd_{dma,dma32,normal,movable}
			PgscanDirect:          u(0 + 441090 + 1593293 + 0),    // pgscan_direct_{dma,dma32,normal,movable}; not _throttle
			PgstealKswapd:         u(0 + 38550288 + 71511708 + 0),
			PgstealDirect:         u(0 + 437026 + 1581028 + 0),
			WorkingsetRefaultFile: u(6498971),
			WorkingsetActivate:    u(296021),
			Pgmajfault:            u(28685),
			Allocstall:            u(18819),
			Pswpin:                u(7867), Pswpout: u(55844),
		}},
		// Old names plus a backported oom_kill.
		{"node-exporter-old", &VMStat{
			PgscanKswapd:          u(107656 + 358784),
			PgscanDirect:          u(67 + 6796),
			PgstealKswapd:         u(78783 + 254128),
			PgstealDirect:         u(44 + 6484),
			WorkingsetRefaultFile: u(157066),
			WorkingsetActivate:    u(104270),
			Pgmajfault:            u(507162),
			Allocstall:            u(83165),
			OOMKill:               u(0),
			Pswpin:                u(1476), Pswpout: u(35045),
		}},
	}
	for _, tt := range tests {
		t.Run(tt.fixture, func(t *testing.T) {
			got, err := newCollector(t, tt.fixture).VMStat()
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("VMStat() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestVMStatMapping(t *testing.T) {
	tests := []struct {
		fixture string
		want    Mapping
	}{
		{"linux-6.18", Mapping{
			"pgscan_kswapd_pages":           {"pgscan_kswapd"},
			"pgscan_direct_pages":           {"pgscan_direct"},
			"pgsteal_kswapd_pages":          {"pgsteal_kswapd"},
			"pgsteal_direct_pages":          {"pgsteal_direct"},
			"pgscan_anon_pages":             {"pgscan_anon"},
			"pgscan_file_pages":             {"pgscan_file"},
			"pgsteal_anon_pages":            {"pgsteal_anon"},
			"pgsteal_file_pages":            {"pgsteal_file"},
			"workingset_refault_file_pages": {"workingset_refault_file"},
			"workingset_refault_anon_pages": {"workingset_refault_anon"},
			"workingset_activate_pages":     {"workingset_activate_file", "workingset_activate_anon"},
			"workingset_restore_pages":      {"workingset_restore_file", "workingset_restore_anon"},
			"pgmajfault":                    {"pgmajfault"},
			"allocstall":                    {"allocstall_dma", "allocstall_dma32", "allocstall_normal", "allocstall_movable", "allocstall_device"},
			"oom_kill":                      {"oom_kill"},
			"pswpin_pages":                  {"pswpin"},
			"pswpout_pages":                 {"pswpout"},
		}},
		{"linux-3.x-goprocinfo", Mapping{
			"pgscan_kswapd_pages":           {"pgscan_kswapd_dma", "pgscan_kswapd_dma32", "pgscan_kswapd_normal", "pgscan_kswapd_movable"},
			"pgscan_direct_pages":           {"pgscan_direct_dma", "pgscan_direct_dma32", "pgscan_direct_normal", "pgscan_direct_movable"},
			"pgsteal_kswapd_pages":          {"pgsteal_kswapd_dma", "pgsteal_kswapd_dma32", "pgsteal_kswapd_normal", "pgsteal_kswapd_movable"},
			"pgsteal_direct_pages":          {"pgsteal_direct_dma", "pgsteal_direct_dma32", "pgsteal_direct_normal", "pgsteal_direct_movable"},
			"pgscan_anon_pages":             nil,
			"pgscan_file_pages":             nil,
			"pgsteal_anon_pages":            nil,
			"pgsteal_file_pages":            nil,
			"workingset_refault_file_pages": {"workingset_refault"},
			"workingset_refault_anon_pages": nil,
			"workingset_activate_pages":     {"workingset_activate"},
			"workingset_restore_pages":      nil, // since 4.20
			"pgmajfault":                    {"pgmajfault"},
			"allocstall":                    {"allocstall"},
			"oom_kill":                      nil,
			"pswpin_pages":                  {"pswpin"},
			"pswpout_pages":                 {"pswpout"},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.fixture, func(t *testing.T) {
			got, err := newCollector(t, tt.fixture).VMStatMapping()
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("VMStatMapping() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// A counter that no kernel spelling provides is nil: the JSON of a 3.x
// sample has no oom_kill at all rather than "oom_kill": 0.
func TestVMStatAbsentIsNotZero(t *testing.T) {
	v, err := newCollector(t, "linux-3.x-goprocinfo").VMStat()
	if err != nil {
		t.Fatal(err)
	}
	if v.OOMKill != nil || v.WorkingsetRefaultAnon != nil || v.PgscanFile != nil {
		t.Errorf("OOMKill, WorkingsetRefaultAnon, PgscanFile = %v, %v, %v; want nil on a 3.x kernel",
			v.OOMKill, v.WorkingsetRefaultAnon, v.PgscanFile)
	}
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{`"oom_kill"`, `"workingset_refault_anon_pages"`, `"pgscan_file_pages"`} {
		if bytes.Contains(b, []byte(key)) {
			t.Errorf("JSON has %s for a counter the kernel lacks: %s", key, b)
		}
	}
	if !bytes.Contains(b, []byte(`"allocstall":18819`)) {
		t.Errorf("JSON lacks \"allocstall\":18819: %s", b)
	}
}

func TestParseVMStatKeepsOnlyMappedCounters(t *testing.T) {
	const in = "nr_free_pages 5910297\npgmajfault 1177\npgscan_direct_throttle 7\nworkingset_refault_file 197274\n"
	got, err := parseVMStat(strings.NewReader(in), "vmstat")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]uint64{"pgmajfault": 1177, "workingset_refault_file": 197274}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("parseVMStat mismatch (-want +got):\n%s", diff)
	}
}

func TestParseVMStatErrors(t *testing.T) {
	tests := []struct {
		name, in, wantPrefix string
	}{
		{"no value", "pgmajfault 1\npgscan_kswapd\n", "vmstat:2: malformed vmstat line"},
		{"not a number", "pgmajfault 1\npswpout 1\noom_kill -1\n", "vmstat:3: malformed vmstat line"},
		{"overflow", "pswpin 18446744073709551616\n", "vmstat:1: malformed vmstat line"},
		{"two spaces", "pswpin  5\n", "vmstat:1: malformed vmstat line"},
		{"line too long", "pgmajfault 1\n" + strings.Repeat("x", bufio.MaxScanTokenSize+1) + "\n", "vmstat: bufio.Scanner: token too long"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parseVMStat(strings.NewReader(tt.in), "vmstat")
			if err == nil || !strings.HasPrefix(err.Error(), tt.wantPrefix) {
				t.Fatalf("parseVMStat error = %v, want prefix %q", err, tt.wantPrefix)
			}
			if tt.name != "line too long" && !errors.Is(err, errParse) {
				t.Errorf("error %v does not wrap errParse", err)
			}
		})
	}
}

// The collector's error for a bad line built in a temporary proc root
// names that file and line.
func TestVMStatErrorNamesFileAndLine(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "vmstat")
	if err := os.WriteFile(path, []byte("pgmajfault 1177\npswpin 0\npswpout zero\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := NewCollector(dir)
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.VMStat()
	want := path + `:3: malformed vmstat line: "pswpout zero"`
	if err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("VMStat() error = %v, want prefix %q", err, want)
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if _, err := c.VMStat(); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("VMStat() without the file: error = %v, want os.ErrNotExist", err)
	}
}

// The collector reuses its buffers between reads; a VMStat it returned
// must not change when the next read happens.
func TestVMStatResultSurvivesNextRead(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "vmstat")
	write := func(s string) {
		t.Helper()
		if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	c, err := NewCollector(dir)
	if err != nil {
		t.Fatal(err)
	}
	write("pswpout 10\noom_kill 1\n")
	first, err := c.VMStat()
	if err != nil {
		t.Fatal(err)
	}
	write("pswpout 20\n" + strings.Repeat("nr_filler 1\n", 2000)) // longer than the first buffer
	second, err := c.VMStat()
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(&VMStat{Pswpout: u(10), OOMKill: u(1)}, first); diff != "" {
		t.Errorf("first read changed (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(&VMStat{Pswpout: u(20)}, second); diff != "" {
		t.Errorf("second read (-want +got):\n%s", diff)
	}
}

// TestVMStatWorkingsetRestore: a real 6.1 file with restores (a UML
// guest's /proc/vmstat, memstate/testdata/uml61): workingset_restore_file
// 1129 + workingset_restore_anon 0.
func TestVMStatWorkingsetRestore(t *testing.T) {
	path := "../memstate/testdata/uml61/proc/vmstat"
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	v, err := ParseVMStat(f, path)
	if err != nil {
		t.Fatal(err)
	}
	if v.WorkingsetRestore == nil || *v.WorkingsetRestore != 1129+0 {
		t.Errorf("WorkingsetRestore = %v, want 1129", v.WorkingsetRestore)
	}
}
