package cmd_test

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memdiag/memdiag/internal/testenv"
	"github.com/memdiag/memdiag/memstate"
)

// TestMemCgroupV2UMLE2E runs the cache-fill and OOM-kill checks of memdiag mem on a second real
// kernel with the memory controller on cgroup v2, which this project's CI
// host (hybrid v1/v2) cannot give: Debian's user-mode Linux 6.1 boots with
// a pure v2 hierarchy, a 32 MiB group filled by page cache from an ext4
// disk, and a 32 MiB group whose anon hog is OOM-killed; memdiag mem runs
// inside the guest. It must show the cache group near its limit with cache
// (reclaimable), not anon, filling it, and list the kill with its name and
// PID from the guest's /dev/kmsg.
func TestMemCgroupV2UMLE2E(t *testing.T) {
	testenv.RequireRoot(t, "a user-mode Linux guest that mounts cgroup v2 and reads /dev/kmsg") // the guest's root is the host's /
	// Its own guest and assertions on it only: beside the other such
	// tests (testenv.Shared), never beside one that reads the host.
	t.Parallel()
	u := testenv.NewSharedUML(t)
	hog, memdiag := testenv.BuildHog(t), testenv.BuildMemdiag(t)

	// An ext4 disk holding a 96 MiB file, three times the group's limit:
	// hostfs files bypass the guest's page cache, ext4 on a ubd disk does not.
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "fs"), 0o755); err != nil {
		t.Fatal(err)
	}
	data := make([]byte, 96<<20)
	for i := range data {
		data[i] = byte(i * 7)
	}
	if err := os.WriteFile(filepath.Join(dir, "fs", "data"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	img := filepath.Join(dir, "disk.img")
	if b, err := exec.Command("mkfs.ext4", "-q", "-d", filepath.Join(dir, "fs"), img, "160M").CombinedOutput(); err != nil {
		testenv.Unmet(t, fmt.Sprintf("mkfs.ext4 -d (e2fsprogs >= 1.43): %v\n%s", err, b))
	}
	os.RemoveAll(filepath.Join(dir, "fs"))
	u.Disks = []string{img}

	const limit = 32 << 20
	script := fmt.Sprintf(`
mount -t cgroup2 none /sys/fs/cgroup
echo +memory > /sys/fs/cgroup/cgroup.subtree_control
mkdir /run/disk && mount -t ext4 /dev/ubda /run/disk
mkdir /sys/fs/cgroup/memdiag-cache /sys/fs/cgroup/memdiag-oom
echo %[1]d > /sys/fs/cgroup/memdiag-cache/memory.max
echo %[1]d > /sys/fs/cgroup/memdiag-oom/memory.max
sh -c 'echo $$ > /sys/fs/cgroup/memdiag-cache/cgroup.procs; exec %[2]s -file /run/disk/data -read-passes 1000' &
sh -c 'echo $$ > /sys/fs/cgroup/memdiag-oom/cgroup.procs; exec %[2]s -anon %[3]d -hold 30s' &
OOM=$!
wait $OOM
echo "$OOM $?" > /run/out/oom-hog
sleep 3
%[4]s mem --format json --interval 1s --top 3 > /run/out/mem.json 2> /run/out/mem.err
echo $? > /run/out/mem.rc
`, limit, hog, 8*limit, memdiag)
	if err := u.Boot(t, script, 3*time.Minute); err != nil {
		t.Fatalf("%v\n%s", err, u.Log())
	}
	read := func(name string) string { return strings.TrimSpace(u.Read(t, name)) }
	var pid, status int
	if _, err := fmt.Sscan(read("oom-hog"), &pid, &status); err != nil || status != 137 {
		t.Fatalf("oom hog: %q (%v); want PID and exit status 137 (SIGKILL)\n%s", read("oom-hog"), err, u.Log())
	}
	if rc := read("mem.rc"); rc != "0" {
		t.Fatalf("memdiag mem in the guest exited %s: %s", rc, read("mem.err"))
	}
	var r memstate.Report
	if err := json.Unmarshal([]byte(read("mem.json")), &r); err != nil {
		t.Fatalf("decode mem.json: %v", err)
	}
	// Debian's UML kernel is built without CONFIG_PSI: said once, plainly.
	var psiWarned int
	for _, w := range r.Warnings {
		if strings.Contains(w, "/proc/pressure/memory: unavailable") {
			psiWarned++
		}
	}
	if psiWarned != 1 {
		t.Errorf("warnings %q: want one saying /proc/pressure/memory is unavailable", r.Warnings)
	}

	// (a) on v2: the cache group.
	cg := findCgroup(r, "/memdiag-cache")
	if cg == nil {
		t.Fatalf("/memdiag-cache not in %+v", r.Cgroups)
	}
	b, _ := json.MarshalIndent(cg, "", "  ")
	t.Logf("cache group as memdiag mem saw it:\n%s", b)
	if cg.Version != 2 || cg.LimitBytes == nil || *cg.LimitBytes != limit {
		t.Errorf("version %d, limit %v; want 2, %d", cg.Version, cg.LimitBytes, limit)
	}
	if !cg.NearLimit || !cg.MostlyCache || cg.AnonBytes > 16<<20 || !strings.Contains(cg.Note, "reclaimable") {
		t.Errorf("want near its limit, mostly cache, anon < 16 MiB, a note calling it reclaimable; got %+v", *cg)
	}

	// (c) on v2: the kill, from the guest's /dev/kmsg.
	kill := kmsgKill(t, r, pid)
	if kill.Comm != "hog" || kill.Constraint != "memcg" || kill.OOMCgroup != "/memdiag-oom" ||
		kill.AnonRSSBytes < limit/2 || kill.AnonRSSBytes > limit {
		t.Errorf("kill = %+v; want hog, memcg, /memdiag-oom, anon-rss in [%d, %d]", *kill, limit/2, limit)
	}
	oomGroup := findCgroup(r, "/memdiag-oom")
	if oomGroup == nil || oomGroup.OOMKills == nil || *oomGroup.OOMKills != 1 {
		t.Errorf("/memdiag-oom memory.events oom_kill: got %+v, want 1", oomGroup)
	}
	if r.OOM.VMStatOOMKills == nil || *r.OOM.VMStatOOMKills != 1 {
		t.Errorf("/proc/vmstat oom_kill = %v, want 1 (a fresh guest)", r.OOM.VMStatOOMKills)
	}
}
