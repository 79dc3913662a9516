package process

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/memdiag/memdiag/internal/rootfs"
)

// TestReadPIDFilesReal reads the real /proc/PID folders of pidFixtures
// through the jailed readers and checks the values against the files
// (memstate/testdata/SOURCE).
func TestReadPIDFilesReal(t *testing.T) {
	proc := "../memstate/testdata/host618/proc"
	ctx := context.Background()
	st, err := ReadStat(ctx, proc, 12762)
	want := Stat{PID: 12762, Comm: "memdiag-mem-hog", State: "S", PPID: 1, NumThreads: 5, StartTicks: 49399}
	if err != nil || st != want {
		t.Errorf("ReadStat = %+v, %v; want %+v", st, err, want)
	}
	if c, err := ReadComm(ctx, proc, 12762); err != nil || c != "memdiag-mem-hog" {
		t.Errorf("ReadComm = %q, %v", c, err)
	}
	args, err := ReadCmdline(ctx, proc, 12762, 4096)
	wantArgs := []string{"/tmp/memdiag-mem-hog", "-write", "209715200", "-file", "/var/tmp/memdiag-mem-fixture.dat", "-read-passes", "2", "-anon", "16777216", "-hold", "120s"}
	if err != nil || !cmp.Equal(args, wantArgs) {
		t.Errorf("ReadCmdline = %q, %v", args, err)
	}
	if args, err := ReadCmdline(ctx, proc, 12762, 12); err != nil || !cmp.Equal(args, []string{"/tmp/memdiag"}) {
		t.Errorf("ReadCmdline cut at 12 bytes = %q, %v; want the first 12 bytes", args, err)
	}
	if r, err := ReadRollup(ctx, proc, 12762); err != nil || r != (Rollup{Rss: 22280 << 10, Pss: 22273 << 10}) {
		t.Errorf("ReadRollup = %+v, %v; want Rss 22280 kB, Pss 22273 kB", r, err)
	}
	io, err := ReadIO(ctx, "../testdata/diskio/poll/t0/proc", 15706)
	if err != nil || io.ReadBytes == 0 && io.WriteBytes == 0 {
		t.Errorf("ReadIO = %+v, %v", io, err)
	}
}

// TestPIDFilesHostile puts, at each per-process file memdiag reads, a
// FIFO with no writer, a link to /dev/zero, a link out of the root (the
// host's own /proc/self/<name>), a sparse file over PIDFileLimit, NUL
// bytes, and a line cut short; and removes the process folder (a process
// that exited). Each read ends at once with an error naming the file —
// fs.ErrNotExist for a gone process, which callers skip — and never
// blocks, reads the host or fills memory. A file cut short parses or
// fails naming its line, never panics.
func TestPIDFilesHostile(t *testing.T) {
	ctx := context.Background()
	readers := map[string]func(proc string) error{
		"stat":         func(p string) error { _, err := ReadStat(ctx, p, 7); return err },
		"comm":         func(p string) error { _, err := ReadComm(ctx, p, 7); return err },
		"io":           func(p string) error { _, err := ReadIO(ctx, p, 7); return err },
		"smaps_rollup": func(p string) error { _, err := ReadRollup(ctx, p, 7); return err },
		"cmdline":      func(p string) error { _, err := ReadCmdline(ctx, p, 7, 4096); return err },
		"cgroup":       func(p string) error { _, err := ReadPIDFile(ctx, p, 7, "cgroup", 0); return err },
		"fd":           func(p string) error { _, err := FDTargets(p, 7); return err },
	}
	real := map[string]string{
		"stat":         "7 (x) S 1 7 7 0 -1 4194304 0 0 0 0 0 0 0 0 20 0 1 0 100 0 0\n",
		"comm":         "x\n",
		"io":           "rchar: 1\nread_bytes: 4096\nwrite_bytes: 0\ncancelled_write_bytes: 0\n",
		"smaps_rollup": "Rss: 8 kB\nPss: 4 kB\n",
		"cmdline":      "x\x00-y\x00",
		"cgroup":       "0::/system.slice/x.service\n",
	}
	kinds := []struct {
		name  string
		setup func(t *testing.T, p, name string)
		want  error // nil: any error, or none for cmdline/cgroup (no format)
	}{
		{"fifo", func(t *testing.T, p, _ string) { must(t, syscall.Mkfifo(p, 0o600)) }, rootfs.ErrNotRegular},
		{"dev-zero", func(t *testing.T, p, _ string) {
			// Resolved inside the root: <root>/dev/zero, a regular file
			// here, stands for the device and must not be taken for it.
			must(t, os.Symlink("/dev/zero", p))
		}, fs.ErrNotExist},
		{"link-out", func(t *testing.T, p, name string) { must(t, os.Symlink("../../../../../../../../proc/self/"+name, p)) }, fs.ErrNotExist},
		{"huge", func(t *testing.T, p, _ string) {
			f, err := os.Create(p)
			must(t, err)
			must(t, f.Truncate(PIDFileLimit+1))
			f.Close()
		}, rootfs.ErrTooLarge},
		{"nul", func(t *testing.T, p, _ string) {
			must(t, os.WriteFile(p, []byte("\x00\x00\x00garbage\x00\xff\n"), 0o600))
		}, ErrParse},
		{"cut", func(t *testing.T, p, name string) {
			must(t, os.WriteFile(p, []byte(real[name][:len(real[name])/2]), 0o600))
		}, ErrParse},
		{"gone", nil, fs.ErrNotExist},
	}
	for name, read := range readers {
		for _, k := range kinds {
			t.Run(name+"/"+k.name, func(t *testing.T) {
				proc := filepath.Join(t.TempDir(), "proc")
				dir := filepath.Join(proc, "7")
				must(t, os.MkdirAll(proc, 0o755))
				if k.setup != nil {
					must(t, os.MkdirAll(dir, 0o755))
					k.setup(t, filepath.Join(dir, name), name)
				}
				err := read(proc)
				want := k.want
				switch {
				case name == "fd" && k.name != "gone" && k.name != "link-out" && k.name != "dev-zero":
					want = syscall.ENOTDIR // fd is a folder: a file there is not listed
				case name == "fd" && k.name == "dev-zero":
					want = fs.ErrNotExist
				case (name == "cmdline" || name == "cgroup") && (k.name == "nul" || k.name == "cut"):
					if err != nil {
						t.Errorf("%s: %v; a %s has no format to break", name, err, name)
					}
					return
				case name == "cmdline" && k.name == "huge":
					if err != nil {
						t.Errorf("cmdline over the limit: %v; want it cut at the caller's limit", err)
					}
					return
				case name == "comm" && k.name == "cut":
					want = nil // "x" cut in half is "x" without its newline: a name
				case name == "io" && k.name == "cut":
					want = ErrParse
				}
				if want == nil {
					if err != nil {
						t.Errorf("err = %v, want none", err)
					}
					return
				}
				if !errors.Is(err, want) {
					t.Fatalf("err = %v, want %v", err, want)
				}
				if !strings.Contains(err.Error(), filepath.Join(proc, "7")) {
					t.Errorf("error %q does not name the file", err)
				}
			})
		}
	}
}

// TestPIDFileVanishesMidRead: a /proc/PID/stat opened while the process
// lives and read after it was reaped gives ESRCH (the kernel's answer
// for a file of a process that is gone), which callers treat as a
// process that exited, not as an error.
func TestPIDFileVanishesMidRead(t *testing.T) {
	cmd := exec.Command("sleep", "60")
	if err := cmd.Start(); err != nil {
		t.Skip(err)
	}
	f, err := rootfs.Open("/proc", strconv.Itoa(cmd.Process.Pid)+"/stat")
	if err != nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		t.Fatal(err)
	}
	defer f.Close()
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	buf := make([]byte, 4096)
	_, err = ReadFile(int(f.Fd()), buf, false)
	if !errors.Is(err, syscall.ESRCH) {
		t.Errorf("read after the process was reaped: %v, want ESRCH", err)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
