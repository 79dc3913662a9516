package testenv

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Cgroup is a memory-limited cgroup made for one test. On a host with the
// memory controller in cgroup v2 it is one v2 group; on a hybrid host (v1
// controllers plus a v2 mount without the memory controller, as on this
// project's CI) it is a v1 memory group for the limit plus a v2 group of
// the same name, whose memory.pressure gives per-cgroup PSI.
type Cgroup struct {
	Name     string
	V2Dir    string // cgroup v2 directory (has memory.pressure); "" if none
	MemV1Dir string // v1 memory controller directory; "" on a pure v2 host
	Limit    int64  // bytes
}

// Mount points on the two layouts memdiag's tests support.
var (
	v2Unified = "/sys/fs/cgroup/unified" // hybrid: v2 without controllers
	v2Root    = "/sys/fs/cgroup"         // pure v2
	v1Memory  = "/sys/fs/cgroup/memory"
)

// NewCgroup creates a cgroup named name (unique per test: include the
// package and test; "parent/child" nests in a cgroup made before) with a
// memory limit of limit bytes (none if limit <= 0), and removes it when
// the test ends after the processes the test put there have ended. The
// test must end its own processes (Cmd.Process.Kill + Wait) in a Cleanup
// registered after this call (cleanups run last-in first-out).
func NewCgroup(t testing.TB, name string, limit int64) *Cgroup {
	t.Helper()
	RequireRoot(t, "creating cgroups")
	Exclusive(t)
	cg := &Cgroup{Name: name, Limit: limit}
	if hasController(v2Root, "memory") {
		cg.V2Dir = filepath.Join(v2Root, name)
		mkdir(t, cg.V2Dir)
		if limit > 0 {
			write(t, filepath.Join(cg.V2Dir, "memory.max"), strconv.FormatInt(limit, 10))
		}
	} else {
		if _, err := os.Stat(filepath.Join(v1Memory, "memory.limit_in_bytes")); err != nil {
			Unmet(t, "no memory cgroup controller (neither cgroup v2 memory nor v1 "+v1Memory+")")
		}
		cg.MemV1Dir = filepath.Join(v1Memory, name)
		mkdir(t, cg.MemV1Dir)
		if limit > 0 {
			write(t, filepath.Join(cg.MemV1Dir, "memory.limit_in_bytes"), strconv.FormatInt(limit, 10))
		}
		if _, err := os.Stat(filepath.Join(v2Unified, "cgroup.procs")); err == nil {
			cg.V2Dir = filepath.Join(v2Unified, name)
			mkdir(t, cg.V2Dir)
		}
	}
	t.Cleanup(func() { cg.remove(t) })
	return cg
}

func hasController(dir, c string) bool {
	b, err := os.ReadFile(filepath.Join(dir, "cgroup.controllers"))
	return err == nil && strings.Contains(" "+string(b)+" ", " "+c+" ")
}

func mkdir(t testing.TB, dir string) {
	t.Helper()
	if err := os.Mkdir(dir, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
		t.Fatalf("create cgroup: %v", err)
	}
}

func write(t testing.TB, path, v string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(v), 0o644); err != nil {
		t.Fatalf("write %s: %v", path, err)
	}
}

// Dirs lists the cgroup's directories (v1 memory, then v2).
func (cg *Cgroup) Dirs() []string {
	var d []string
	for _, x := range []string{cg.MemV1Dir, cg.V2Dir} {
		if x != "" {
			d = append(d, x)
		}
	}
	return d
}

// Command returns a command that runs name args inside the cgroup: a shell
// moves itself into each of the cgroup's directories and execs the program,
// so the program is in the group from its first instruction.
func (cg *Cgroup) Command(name string, args ...string) *exec.Cmd {
	var b strings.Builder
	for _, d := range cg.Dirs() {
		fmt.Fprintf(&b, "echo $$ > %q/cgroup.procs || exit 97; ", d)
	}
	b.WriteString(`exec "$@"`)
	c := exec.Command("/bin/sh", append([]string{"-c", b.String(), "sh", name}, args...)...)
	c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	return c
}

// remove deletes the cgroup directories, waiting briefly for exited
// processes to leave them.
func (cg *Cgroup) remove(t testing.TB) {
	for _, d := range []string{cg.V2Dir, cg.MemV1Dir} {
		if d == "" {
			continue
		}
		var err error
		for i := 0; i < 50; i++ {
			if err = os.Remove(d); err == nil || errors.Is(err, os.ErrNotExist) {
				err = nil
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
		if err != nil {
			t.Errorf("remove cgroup %s: %v (processes still in it?)", d, err)
		}
	}
}

// Procs lists the PIDs in the cgroup's v2 (else v1) directory.
func (cg *Cgroup) Procs() ([]int, error) {
	d := cg.V2Dir
	if d == "" {
		d = cg.MemV1Dir
	}
	b, err := os.ReadFile(filepath.Join(d, "cgroup.procs"))
	if err != nil {
		return nil, err
	}
	var pids []int
	for _, f := range strings.Fields(string(b)) {
		if p, err := strconv.Atoi(f); err == nil {
			pids = append(pids, p)
		}
	}
	return pids, nil
}
