package memstate

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/memdiag/memdiag/internal/rootfs"
)

func intp(v int) *int { return &v }

// reportFields leaves out what the OOM report adds to a kill; the
// TestOOMReport* tests check those.
var reportFields = cmpopts.IgnoreFields(OOMKill{}, "Trigger", "Cpuset", "MemsAllowed", "CgroupSwapCounter",
	"CgroupSwapUsageBytes", "CgroupSwapLimitBytes", "CgroupStats", "AtKill", "Tasks", "PageSizeBytes", "PageSizeFrom", "Cause")

func TestParseKernelLog(t *testing.T) {
	const k = 1024
	boot := time.Unix(1795988121, 0).UTC() // host618/proc/stat btime
	tests := []struct {
		file string
		want []OOMKill
	}{
		{"host618/dev/kmsg", []OOMKill{{
			SinceBoot: 523181986 * time.Microsecond,
			Time:      boot.Add(523181986 * time.Microsecond),
			PID:       13919, Comm: "memdiag-mem-hog", UID: intp(0),
			TotalVMBytes: 1292960 * k, AnonRSSBytes: 32384 * k, FileRSSBytes: 1660 * k, ShmemRSSBytes: 0,
			Constraint: "memcg", ConstraintRaw: "CONSTRAINT_MEMCG",
			OOMCgroup: "/memdiag-mem-oomfix", TaskCgroup: "/memdiag-mem-oomfix",
			CgroupUsageBytes: 32 << 20, CgroupLimitBytes: 32 << 20, // "memory: usage 32768kB, limit 32768kB"
		}}},
		{"oom/journal-5.15-global.txt", []OOMKill{{
			SinceBoot: 2211823501 * time.Microsecond,
			Time:      boot.Add(2211823501 * time.Microsecond),
			PID:       4242, Comm: "python3", UID: intp(1000),
			TotalVMBytes: 2938404 * k, AnonRSSBytes: 1830120 * k, FileRSSBytes: 2188 * k,
			Constraint: "global", ConstraintRaw: "CONSTRAINT_NONE",
			TaskCgroup: "/system.slice/app.service",
		}}},
		{"oom/dmesg-4.14-memcg.txt", []OOMKill{{
			SinceBoot: 1523441471 * time.Microsecond,
			Time:      boot.Add(1523441471 * time.Microsecond),
			PID:       2915, Comm: "hog",
			TotalVMBytes: 1125588 * k, AnonRSSBytes: 64360 * k, FileRSSBytes: 1720 * k,
			Constraint: "memcg",
			OOMCgroup:  "/docker/4f2c9e1a", TaskCgroup: "/docker/4f2c9e1a",
			CgroupUsageBytes: 64 << 20, CgroupLimitBytes: 64 << 20,
		}}},
		{"oom/dmesg-3.10-global.txt", []OOMKill{{
			SinceBoot: 8761092913 * time.Microsecond,
			Time:      boot.Add(8761092913 * time.Microsecond),
			PID:       1862, Comm: "java",
			TotalVMBytes: 4387524 * k, AnonRSSBytes: 3483772 * k, FileRSSBytes: 0,
			Constraint: "global",
		}}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			f, err := os.Open(filepath.Join("testdata", tt.file))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			got, err := parseKernelLog(f, tt.file, boot)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tt.want, got, reportFields); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}

func TestParseKernelLogNoBoot(t *testing.T) {
	// Without a boot time, Time stays zero; the since-boot stamp remains.
	got, err := parseKernelLog(strings.NewReader(
		"[ 5.5] Killed process 7 (a b) total-vm:4kB, anon-rss:8kB, file-rss:0kB, shmem-rss:12kB\n"), "x", time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	want := []OOMKill{{SinceBoot: 5500 * time.Millisecond, PID: 7, Comm: "a b", TotalVMBytes: 4096, AnonRSSBytes: 8192, ShmemRSSBytes: 12288}}
	if d := cmp.Diff(want, got, reportFields); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
}

func TestParseKernelLogTwoKills(t *testing.T) {
	// Two kmsg files' worth of events in one stream keep their own details.
	a, err := os.ReadFile("testdata/host618/dev/kmsg")
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile("testdata/oom/dmesg-4.14-memcg.txt")
	if err != nil {
		t.Fatal(err)
	}
	got, err := parseKernelLog(strings.NewReader(string(b)+string(a)), "x", time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].PID != 2915 || got[0].OOMCgroup != "/docker/4f2c9e1a" ||
		got[1].PID != 13919 || got[1].OOMCgroup != "/memdiag-mem-oomfix" {
		t.Errorf("got %+v", got)
	}
}

func TestReadKmsgFile(t *testing.T) {
	// A regular file (a fixture root) is read whole, in one or more reads.
	want, err := os.ReadFile("testdata/host618/dev/kmsg")
	if err != nil {
		t.Fatal(err)
	}
	got, err := ReadKmsg(context.Background(), "testdata/host618")
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Errorf("ReadKmsg returned %d bytes, want the file's %d", len(got), len(want))
	}
	if _, err := ReadKmsg(context.Background(), t.TempDir()); !os.IsNotExist(err) {
		t.Errorf("missing file: err = %v, want not-exist", err)
	}
}

// TestReadKmsgHostile: a fixture root whose dev/kmsg is a FIFO (no
// writer, or one that never stops), a link to /dev/zero, a link out of
// the root, or a regular file over KmsgLimit gives a clear error naming
// the file, at once and without reading the host's log or filling
// memory. Before, the link to /dev/zero was read until memory ran out and
// a link to /dev/kmsg read the host's ring buffer.
func TestReadKmsgHostile(t *testing.T) {
	for _, tc := range []struct {
		name  string
		setup func(t *testing.T, p string)
		want  error
	}{
		{"fifo", func(t *testing.T, p string) {
			if err := syscall.Mkfifo(p, 0o600); err != nil {
				t.Fatal(err)
			}
		}, rootfs.ErrNotRegular},
		{"dev-zero", func(t *testing.T, p string) {
			if err := os.Symlink("/dev/zero", p); err != nil {
				t.Fatal(err)
			}
		}, fs.ErrNotExist}, // resolved inside the root: <root>/dev/zero does not exist
		{"dev-zero-in-root", func(t *testing.T, p string) {
			if err := os.Symlink("../../../../../../../../dev/zero", p); err != nil {
				t.Fatal(err)
			}
		}, fs.ErrNotExist},
		{"huge", func(t *testing.T, p string) {
			f, err := os.Create(p)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			// Sparse: KmsgLimit+1 bytes of NULs cost no disk.
			if err := f.Truncate(KmsgLimit + 1); err != nil {
				t.Fatal(err)
			}
		}, rootfs.ErrTooLarge},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			if err := os.MkdirAll(filepath.Join(root, "dev"), 0o755); err != nil {
				t.Fatal(err)
			}
			p := filepath.Join(root, "dev/kmsg")
			tc.setup(t, p)
			b, err := ReadKmsg(context.Background(), root)
			if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), p) {
				t.Fatalf("ReadKmsg = %d bytes, %v; want %v naming %s", len(b), err, tc.want, p)
			}
		})
	}
	// The one device taken is /dev/kmsg itself (1:11), on the live host.
	if _, err := os.Stat("/dev/kmsg"); err == nil {
		_, err := ReadKmsg(context.Background(), "/")
		if errors.Is(err, rootfs.ErrNotRegular) {
			t.Errorf("ReadKmsg(/) = %v; the kmsg device must be taken", err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := ReadKmsg(ctx, "testdata/host618"); !errors.Is(err, context.Canceled) {
		t.Errorf("ReadKmsg(cancelled) = %v, want context.Canceled", err)
	}
}

func BenchmarkParseKernelLog(b *testing.B) {
	data, err := os.ReadFile("testdata/host618/dev/kmsg")
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, err := parseKernelLog(strings.NewReader(string(data)), "kmsg", time.Time{}); err != nil {
			b.Fatal(err)
		}
	}
}

func TestParseKernelLogUML61V1(t *testing.T) {
	// A real 6.1.176 dmesg (testdata/SOURCE): a cgroup v1 memcg kill.
	f, err := os.Open("testdata/oom/dmesg-6.1-uml-memcg-v1.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	got, err := parseKernelLog(f, "dmesg", time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	want := []OOMKill{{
		SinceBoot: 2240 * time.Millisecond, PID: 684, Comm: "tail", UID: intp(0),
		TotalVMBytes: 35036 * 1024, AnonRSSBytes: 32624 * 1024, FileRSSBytes: 1116 * 1024,
		Constraint: "memcg", ConstraintRaw: "CONSTRAINT_MEMCG",
		OOMCgroup: "/memdiag-oom", TaskCgroup: "/memdiag-oom",
		CgroupUsageBytes: 32 << 20, CgroupLimitBytes: 32 << 20,
	}}
	if d := cmp.Diff(want, got, reportFields); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
}

func TestParseKernelLogOldVariants(t *testing.T) {
	// Line shapes of pre-4.19 kernels as users have posted them (e.g.
	// RHEL 7's "Killed process N (c), UID u, total-vm:…" in
	// linux-test-project/ltp#1080 and apache/doris#3525, a sacrificed
	// child whose PID differs from the "Kill process" line in
	// apache/doris#3525); the figures here are made up.
	log := "" +
		"[  100.000001] Task in /docker/ab killed as a result of limit of /docker/ab\n" +
		"[  100.000002] Memory cgroup out of memory: Kill process 500 (java) score 990 or sacrifice child\n" +
		"[  100.000003] Killed process 501 (java), UID 1001, total-vm:2048kB, anon-rss:1024kB, file-rss:4kB, shmem-rss:0kB\n" +
		"[  200.5] Out of memory: Kill process 600 (big) score 900 or sacrifice child\n" +
		"[  200.6] Killed process 600 (big) total-vm:8kB, anon-rss:4kB, file-rss:0kB\n"
	got, err := parseKernelLog(strings.NewReader(log), "x", time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	want := []OOMKill{
		{
			SinceBoot: 100*time.Second + 3*time.Microsecond, PID: 501, Comm: "java", UID: intp(1001),
			TotalVMBytes: 2 << 20, AnonRSSBytes: 1 << 20, FileRSSBytes: 4096,
			Constraint: "memcg", OOMCgroup: "/docker/ab", TaskCgroup: "/docker/ab",
		},
		{
			SinceBoot: 200*time.Second + 600*time.Millisecond, PID: 600, Comm: "big",
			TotalVMBytes: 8192, AnonRSSBytes: 4096, Constraint: "global",
		},
	}
	if d := cmp.Diff(want, got, reportFields); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
}

// parseKernelLog finds the OOM kills in kernel log text, with the report
// the kernel wrote before each: [ParseKernelLogWith] with only a boot
// time.
func parseKernelLog(r io.Reader, name string, boot time.Time) ([]OOMKill, error) {
	return ParseKernelLogWith(r, name, LogOptions{Boot: boot})
}
