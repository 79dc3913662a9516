package victim

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/memdiag/memdiag/cgroupfs"
	"github.com/memdiag/memdiag/record"
)

// The hybrid fixture (testdata/hybrid/SOURCE): websvc, pid 14762,
// listening on 127.0.0.1:41813 (0100007F:A355, inode 25930), in
// /memdiag-victim-fixture of both the v2 and the v1 memory hierarchy.
const (
	fixPID   = 14762
	fixPort  = "41813"
	fixGroup = "/memdiag-victim-fixture"
)

// copyTree copies the regular files of src into dst.
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

func symlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

func mkdirs(t *testing.T, dirs ...string) {
	t.Helper()
	for _, d := range dirs {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
}

// fixtureRoot lays testdata/hybrid out as a root in t.TempDir(), with
// what git does not store: proc/self, the websvc's fd links and the
// cgroup directories of its group.
func fixtureRoot(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	copyTree(t, "testdata/hybrid", root)
	proc := filepath.Join(root, "proc")
	symlink(t, "14762", filepath.Join(proc, "self"))
	symlink(t, "/dev/null", filepath.Join(proc, "14762/fd/0"))
	symlink(t, "socket:[25930]", filepath.Join(proc, "14762/fd/8"))
	mkdirs(t, filepath.Join(root, "sys/fs/cgroup/unified", fixGroup), filepath.Join(root, "sys/fs/cgroup/memory", fixGroup))
	return root
}

func newFixtureFinder(t *testing.T, root string) *Finder {
	t.Helper()
	m, err := cgroupfs.ReadMounts(filepath.Join(root, "proc"), root)
	if err != nil {
		t.Fatal(err)
	}
	f, err := New(Options{ProcRoot: filepath.Join(root, "proc"), Mounts: m,
		LocalAddrs: func() ([]net.Addr, error) {
			return []net.Addr{&net.IPNet{IP: net.ParseIP("192.0.2.2"), Mask: net.CIDRMask(24, 32)}}, nil
		},
		LookupHost: func(_ context.Context, h string) ([]net.IP, error) {
			switch h {
			case "me.example":
				return []net.IP{net.ParseIP("192.0.2.2")}, nil
			case "far.example":
				return []net.IP{net.ParseIP("203.0.113.9")}, nil
			}
			return nil, errors.New("no such host")
		}})
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func TestFromURL(t *testing.T) {
	root := fixtureRoot(t)
	f := newFixtureFinder(t, root)
	want := &record.Victim{
		PID: fixPID, Comm: "victim-websvc", How: record.VictimFromProbe,
		Detail:    "127.0.0.1:41813 is a listening socket of victim-websvc (pid 14762)",
		Cgroup:    fixGroup,
		Memcg:     fixGroup,
		CgroupDir: filepath.Join(root, "sys/fs/cgroup/unified", fixGroup),
		MemcgDir:  filepath.Join(root, "sys/fs/cgroup/memory", fixGroup), MemcgVersion: 1,
		Holders: 1,
	}
	got, err := f.FromURL(context.Background(), "http://127.0.0.1:"+fixPort+"/health", record.VictimFromProbe)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("FromURL (-want +got):\n%s", diff)
	}
	// localhost resolves to loopback without a lookup; the listener is
	// on 127.0.0.1 only.
	got, err = f.FromURL(context.Background(), "http://localhost:"+fixPort+"/", record.VictimFromLatency)
	if err != nil {
		t.Fatal(err)
	}
	if got.PID != fixPID || got.How != record.VictimFromLatency {
		t.Errorf("localhost: got pid %d how %q", got.PID, got.How)
	}
}

func TestFromURLErrors(t *testing.T) {
	root := fixtureRoot(t)
	f := newFixtureFinder(t, root)
	for _, tc := range []struct {
		url      string
		notLocal bool
		msg      string
	}{
		{"http://203.0.113.9:8080/", true, "203.0.113.9 is not an address of this host"},
		{"http://far.example/", true, "pass --victim"},
		// An address of this host, but websvc listens on 127.0.0.1 only.
		{"http://me.example:" + fixPort + "/", false, "me.example:41813: no listening TCP socket"},
		{"http://127.0.0.1:9/", false, "127.0.0.1:9: no listening TCP socket"},
		{"http://nosuch.example/", false, "cannot resolve"},
		{"ftp://127.0.0.1/", false, "no default one"},
		// 0.0.0.0:2024 (inode 195) listens, but no process in the
		// fixture holds it.
		{"http://127.0.0.1:2024/", false, "no process holds its listening socket"},
	} {
		t.Run(tc.url, func(t *testing.T) {
			_, err := f.FromURL(context.Background(), tc.url, record.VictimFromProbe)
			if err == nil {
				t.Fatal("no error")
			}
			var nl *NotLocalError
			if errors.As(err, &nl) != tc.notLocal {
				t.Errorf("NotLocalError: %v, want %v (%v)", !tc.notLocal, tc.notLocal, err)
			}
			if !errors.Is(err, ErrNotFound) {
				t.Errorf("%v does not wrap ErrNotFound", err)
			}
			if !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("error %q lacks %q", err, tc.msg)
			}
		})
	}
}

// TestFromURLPrefork: a master and two workers hold the socket; the
// master, whose parent holds none, is the victim.
func TestFromURLPrefork(t *testing.T) {
	root := fixtureRoot(t)
	proc := filepath.Join(root, "proc")
	stat, _ := os.ReadFile(filepath.Join(proc, "14762/stat"))
	for _, pid := range []string{"14800", "14801"} {
		// The workers' stat: the master's, with their own pid and ppid 14762.
		s := strings.Replace(string(stat), "14762 (victim-websvc) S 1 ", pid+" (victim-websvc) S 14762 ", 1)
		cg, _ := os.ReadFile(filepath.Join(proc, "14762/cgroup"))
		mkdirs(t, filepath.Join(proc, pid))
		for name, b := range map[string]string{"stat": s, "cgroup": string(cg)} {
			if err := os.WriteFile(filepath.Join(proc, pid, name), []byte(b), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		symlink(t, "socket:[25930]", filepath.Join(proc, pid, "fd/3"))
	}
	got, err := newFixtureFinder(t, root).FromURL(context.Background(), "http://127.0.0.1:"+fixPort+"/", record.VictimFromProbe)
	if err != nil {
		t.Fatal(err)
	}
	if got.PID != fixPID || got.Holders != 3 {
		t.Errorf("got pid %d of %d holders, want %d of 3", got.PID, got.Holders, fixPID)
	}
	if want := "127.0.0.1:41813 is a listening socket of victim-websvc (pid 14762), the parent of the 3 processes holding it"; got.Detail != want {
		t.Errorf("detail %q, want %q", got.Detail, want)
	}
}

func TestMainHolder(t *testing.T) {
	for _, tc := range []struct {
		holders map[int]int
		want    int
	}{
		{map[int]int{10: 1}, 10},
		{map[int]int{10: 1, 11: 10, 12: 10}, 10},
		{map[int]int{30: 1, 20: 1}, 20}, // two unrelated: the lowest
		{map[int]int{5: 6, 6: 5}, 5},    // a cycle (cannot happen): the lowest
	} {
		if got := mainHolder(tc.holders); got != tc.want {
			t.Errorf("mainHolder(%v) = %d, want %d", tc.holders, got, tc.want)
		}
	}
}

func TestFromFlag(t *testing.T) {
	root := fixtureRoot(t)
	uni, mem := filepath.Join(root, "sys/fs/cgroup/unified"), filepath.Join(root, "sys/fs/cgroup/memory")
	mkdirs(t, filepath.Join(uni, "system.slice/web.service"), filepath.Join(mem, "system.slice/web.service"),
		filepath.Join(uni, "a.slice/dup.service"), filepath.Join(uni, "b.slice/dup.service"),
		filepath.Join(mem, "system.slice/v1only.service"))
	f := newFixtureFinder(t, root)
	web := &record.Victim{How: record.VictimGiven, Unit: "web.service",
		Cgroup: "/system.slice/web.service", Memcg: "/system.slice/web.service",
		CgroupDir: filepath.Join(uni, "system.slice/web.service"), MemcgDir: filepath.Join(mem, "system.slice/web.service"), MemcgVersion: 1}
	for _, tc := range []struct {
		value string
		want  *record.Victim
	}{
		{"14762", &record.Victim{PID: fixPID, Comm: "victim-websvc", How: record.VictimGiven, Detail: "given as --victim 14762",
			Cgroup: fixGroup, Memcg: fixGroup, CgroupDir: filepath.Join(uni, fixGroup), MemcgDir: filepath.Join(mem, fixGroup), MemcgVersion: 1}},
		{"web.service", withDetail(web, "given as --victim web.service")},
		{"system.slice/web.service", withDetail(web, "given as --victim system.slice/web.service")},
		{"/sys/fs/cgroup/unified/system.slice/web.service", withDetail(web, "given as --victim /sys/fs/cgroup/unified/system.slice/web.service")},
		// A v1 memory directory: its v2 twin is taken when it exists.
		{"/sys/fs/cgroup/memory/system.slice/web.service", withDetail(web, "given as --victim /sys/fs/cgroup/memory/system.slice/web.service")},
		{"v1only.service", &record.Victim{How: record.VictimGiven, Unit: "v1only.service", Detail: "given as --victim v1only.service",
			Memcg: "/system.slice/v1only.service", MemcgDir: filepath.Join(mem, "system.slice/v1only.service"), MemcgVersion: 1}},
	} {
		t.Run(tc.value, func(t *testing.T) {
			got, err := f.FromFlag(tc.value)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("FromFlag (-want +got):\n%s", diff)
			}
		})
	}
	for _, tc := range []struct{ value, msg string }{
		{"", "empty"},
		{"0", "not a PID"},
		{"99999", "no such process"},
		{"dup.service", "matches 2 cgroups"},
		{"gone.service", "no cgroup of that name under /sys/fs/cgroup/unified or /sys/fs/cgroup/memory"},
		{"no/such/group", "no such cgroup directory"},
		{"/etc", "no such cgroup directory"},
	} {
		t.Run("bad "+tc.value, func(t *testing.T) {
			_, err := f.FromFlag(tc.value)
			if !errors.Is(err, ErrBadFlag) {
				t.Fatalf("error %v does not wrap ErrBadFlag", err)
			}
			if !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("error %q lacks %q", err, tc.msg)
			}
		})
	}
}

func withDetail(v *record.Victim, d string) *record.Victim {
	c := *v
	c.Detail = d
	return &c
}

func TestParseFlag(t *testing.T) {
	for _, tc := range []struct {
		in   string
		kind string
		pid  int
	}{
		{"4242", FlagPID, 4242},
		{" 17 ", FlagPID, 17},
		{"web.service", FlagUnit, 0},
		{"session-3.scope", FlagUnit, 0},
		{"user.slice", FlagUnit, 0},
		{"web.socket", FlagUnit, 0},
		{".service", FlagCgroup, 0},
		{"system.slice/web.service", FlagCgroup, 0},
		{"/sys/fs/cgroup/unified/x", FlagCgroup, 0},
		{"web.timer", FlagCgroup, 0},
	} {
		kind, pid, err := ParseFlag(tc.in)
		if err != nil || kind != tc.kind || pid != tc.pid {
			t.Errorf("ParseFlag(%q) = %q, %d, %v; want %q, %d", tc.in, kind, pid, err, tc.kind, tc.pid)
		}
	}
}

func FuzzParseFlag(f *testing.F) {
	for _, s := range []string{"4242", "web.service", "a/b.slice", "/sys/fs/cgroup/x", "", "0", "99999999999999999999"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		kind, pid, err := ParseFlag(s)
		if err != nil {
			if !errors.Is(err, ErrBadFlag) {
				t.Fatalf("ParseFlag(%q): %v does not wrap ErrBadFlag", s, err)
			}
			return
		}
		switch kind {
		case FlagPID:
			if pid <= 0 {
				t.Fatalf("ParseFlag(%q): pid %d", s, pid)
			}
		case FlagUnit, FlagCgroup:
			if pid != 0 {
				t.Fatalf("ParseFlag(%q): %s with pid %d", s, kind, pid)
			}
		default:
			t.Fatalf("ParseFlag(%q): kind %q", s, kind)
		}
	})
}

func TestIsHostRoot(t *testing.T) {
	if !IsHostRoot(&record.Victim{Cgroup: "/"}) || IsHostRoot(&record.Victim{Cgroup: "/a"}) || IsHostRoot(nil) {
		t.Error("IsHostRoot")
	}
}

func TestFind(t *testing.T) {
	root := fixtureRoot(t)
	f := newFixtureFinder(t, root)
	ctx := context.Background()
	url := "http://127.0.0.1:" + fixPort + "/"
	for _, tc := range []struct {
		flag, probe string
		pid         int
		available   bool
		reason      string
	}{
		{"", url, fixPID, true, ""},
		{"14762", "http://203.0.113.9/", fixPID, true, ""}, // --victim wins over the probe
		{"", "", 0, false, "no service URL to find it from: pass --victim"},
		{"", "http://203.0.113.9/", 0, false, "not found from --probe: 203.0.113.9 is not an address of this host"},
		{"", "http://127.0.0.1:9/", 0, false, "no listening TCP socket"},
	} {
		var ts []Target
		if tc.probe != "" {
			ts = []Target{{URL: tc.probe, How: record.VictimFromProbe, From: "--probe"}}
		}
		v, st, err := f.Find(ctx, tc.flag, ts)
		if err != nil {
			t.Fatalf("Find(%q, %q): %v", tc.flag, tc.probe, err)
		}
		if (v != nil) != (tc.pid != 0) || v != nil && v.PID != tc.pid || st.Available != tc.available ||
			st.Name != StatusName || !strings.Contains(st.Reason, tc.reason) || (!tc.available && !strings.Contains(st.Reason, "--victim")) {
			t.Errorf("Find(%q, %q) = %+v, %+v", tc.flag, tc.probe, v, st)
		}
	}
	probe := []Target{{URL: url, How: record.VictimFromProbe, From: "--probe"}}
	if _, _, err := f.Find(ctx, "nosuch.service", probe); !errors.Is(err, ErrBadFlag) {
		t.Errorf("bad --victim: %v", err)
	}
	// The victim in the root group: found, with a note.
	if err := os.WriteFile(filepath.Join(root, "proc/14762/cgroup"), []byte("4:memory:/\n0::/\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	v, st, err := f.Find(ctx, "", probe)
	if err != nil || v == nil || !st.Available || !strings.Contains(st.Reason, "cannot be told apart from the host's") {
		t.Errorf("root group: %+v, %+v, %v", v, st, err)
	}
}

// TestMemoryLimit: the nearest group with a memory limit, itself or an
// ancestor, the root included, in v1 and v2 layouts built in a temp dir.
func TestMemoryLimit(t *testing.T) {
	root := t.TempDir()
	mk := groupFiles(t, root)
	mk("v1/app.slice", "memory.limit_in_bytes", "234881024")
	mk("v1/app.slice/web.service", "memory.limit_in_bytes", "9223372036854771712")
	mk("v1/free.slice/x.service", "memory.limit_in_bytes", "9223372036854771712")
	mk("v1/free.slice", "memory.limit_in_bytes", "9223372036854771712")
	mk("v2/app.slice", "memory.max", "max")
	mk("v2/app.slice/web.service", "memory.max", "104857600")
	mk("ns", "memory.limit_in_bytes", "335544320")
	mk("ns/system.slice", "memory.limit_in_bytes", "9223372036854771712")
	mk("ns/system.slice/web.service", "memory.limit_in_bytes", "9223372036854771712")
	mk("host", "memory.limit_in_bytes", "9223372036854771712")
	mk("host/system.slice", "memory.limit_in_bytes", "9223372036854771712")
	mk("host/system.slice/web.service", "memory.limit_in_bytes", "9223372036854771712")
	for _, c := range []struct {
		dir, memcg string
		version    int
		want       string
		bytes      uint64
	}{
		{"v1/app.slice/web.service", "/app.slice/web.service", 1, "/app.slice", 234881024},
		{"v1/free.slice/x.service", "/free.slice/x.service", 1, "", 0},
		{"v2/app.slice/web.service", "/app.slice/web.service", 2, "/app.slice/web.service", 104857600},
		// In a cgroup namespace (a container) the root is the container's
		// group, with its limit; a host's v1 root says unlimited.
		{"ns/system.slice/web.service", "/system.slice/web.service", 1, "/", 335544320},
		{"host/system.slice/web.service", "/system.slice/web.service", 1, "", 0},
		{"ns", "/", 1, "/", 335544320},
	} {
		got, b := memoryLimit(filepath.Join(root, c.dir), c.memcg, c.version)
		if got != c.want || b != c.bytes {
			t.Errorf("memoryLimit(%s) = %q, %d; want %q, %d", c.dir, got, b, c.want, c.bytes)
		}
	}
}

// TestGroupLimit (issue 30.3): the limit that bounds a --cgroup scope,
// given as its cgroup2 directory: on pure v2 read in the same hierarchy,
// on a hybrid host in the v1 memory hierarchy at the same group path; a
// directory outside the cgroup2 mount, or without a memory group, is
// not known.
func TestGroupLimit(t *testing.T) {
	root := t.TempDir()
	mk := groupFiles(t, root)
	// Pure v2 under /v2: /x.slice limited, /x.slice/web.service not.
	mk("v2/x.slice", "memory.max", "234881024")
	mk("v2/x.slice/web.service", "memory.max", "max")
	mk("v2/free.slice", "memory.max", "max")
	// Hybrid: /uni is the cgroup2 mount, /mem the v1 memory one.
	mk("uni/x.slice/web.service", "", "")
	mk("mem/x.slice/web.service", "memory.limit_in_bytes", "536870912")
	mk("mem/x.slice", "memory.limit_in_bytes", "9223372036854771712")
	mk("uni/nomem.slice", "", "")
	v2 := cgroupfs.Mounts{Root: root, Unified: "/v2"}
	hy := cgroupfs.Mounts{Root: root, Unified: "/uni", Memory: "/mem"}
	for _, c := range []struct {
		m     cgroupfs.Mounts
		dir   string
		limit string
		bytes uint64
		ok    bool
	}{
		{v2, "v2/x.slice/web.service", "/x.slice", 234881024, true},
		{v2, "v2/free.slice", "", 0, true},
		{hy, "uni/x.slice/web.service", "/x.slice/web.service", 536870912, true},
		{hy, "uni/nomem.slice", "", 0, false},
		{v2, "elsewhere/x.slice", "", 0, false},
	} {
		limit, b, ok := GroupLimit(c.m, filepath.Join(root, c.dir))
		if limit != c.limit || b != c.bytes || ok != c.ok {
			t.Errorf("GroupLimit(%s) = %q, %d, %v; want %q, %d, %v", c.dir, limit, b, ok, c.limit, c.bytes, c.ok)
		}
	}
}

// groupFiles returns mk(rel, file, val): it makes the folder rel under
// root and, when file is not "", writes val and a newline to it.
func groupFiles(t *testing.T, root string) func(rel, file, val string) {
	return func(rel, file, val string) {
		t.Helper()
		d := filepath.Join(root, rel)
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if file == "" {
			return
		}
		if err := os.WriteFile(filepath.Join(d, file), []byte(val+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
