package victim

import (
	"bufio"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memdiag/memdiag/cgroupfs"
	"github.com/memdiag/memdiag/internal/testenv"
	"github.com/memdiag/memdiag/record"
)

// TestFromURLLive starts websvc in a test cgroup and finds it from its
// URL on the live host: its PID, its v2 group's directory and its memory
// group's directory.
func TestFromURLLive(t *testing.T) {
	testenv.RequireRoot(t, "creating a cgroup for websvc")
	bin := testenv.BuildPackage(t, "github.com/memdiag/memdiag/internal/testenv/websvc", "websvc")
	cg := testenv.NewCgroup(t, "memdiag-victim-TestFromURLLive", 0)
	dir := t.TempDir()
	cmd := cg.Command(bin, "--data", filepath.Join(dir, "data"), "--data-size", "1048576", "--anon", "1048576")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	addr, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("websvc's address: %v", err)
	}
	addr = strings.TrimSpace(addr)

	m, err := cgroupfs.ReadMounts("/proc", "/")
	if err != nil {
		t.Fatal(err)
	}
	f, err := New(Options{ProcRoot: "/proc", Mounts: m})
	if err != nil {
		t.Fatal(err)
	}
	v, err := f.FromURL(context.Background(), "http://"+addr+"/", record.VictimFromProbe)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%+v", v)
	if v.PID != cmd.Process.Pid {
		t.Errorf("pid %d, want %d (the shell exec'd websvc)", v.PID, cmd.Process.Pid)
	}
	if v.CgroupDir != cg.V2Dir {
		t.Errorf("cgroup dir %q, want %q", v.CgroupDir, cg.V2Dir)
	}
	wantMem, wantVersion := cg.MemV1Dir, 1
	if wantMem == "" {
		wantMem, wantVersion = cg.V2Dir, 2
	}
	if v.MemcgDir != wantMem || v.MemcgVersion != wantVersion {
		t.Errorf("memcg dir %q v%d, want %q v%d", v.MemcgDir, v.MemcgVersion, wantMem, wantVersion)
	}
	if want := addr + " is a listening socket of websvc (pid "; !strings.HasPrefix(v.Detail, want) {
		t.Errorf("detail %q, want it to start %q", v.Detail, want)
	}
}
