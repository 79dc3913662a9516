package cmd_test

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
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
// PID from the guest's /dev/kmsg, and say that the OOM group reached its
// limit N times and what its peak was, as the guest kernel's own
// memory.events and memory.peak say (checkLimitHistory; issue 30 item 5).
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
G=/sys/fs/cgroup/memdiag-oom
cat $G/memory.peak > /run/out/oom-peak; cat $G/memory.max > /run/out/oom-max; cat $G/memory.events > /run/out/oom-events
%[4]s mem --format json --interval 1s --top 3 > /run/out/mem.json 2> /run/out/mem.err
echo $? > /run/out/mem.rc
%[4]s mem --interval 1s --top 3 > /run/out/mem.txt 2> /run/out/mem-txt.err
echo $? > /run/out/mem-txt.rc
cat $G/memory.peak $G/memory.events > /run/out/oom-after
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
	if rc := read("mem-txt.rc"); rc != "0" {
		t.Fatalf("memdiag mem (text) in the guest exited %s: %s", rc, read("mem-txt.err"))
	}
	checkLimitHistory(t, read, oomGroup, read("mem.txt"))
}

// checkLimitHistory checks what memdiag mem said of /memdiag-oom's past
// (g from its JSON, txt its text) against the guest kernel's own files,
// read in the same guest just before it ran (oom-peak, oom-max,
// oom-events) and unchanged after (oom-after; no task is left in the
// group): how many times it reached its limit (memory.events max), reclaim
// failed (oom) and a task was killed (oom_kill), and its peak
// (memory.peak) in bytes and against memory.max — in the JSON's fields,
// the group's note (JSON and text) and the verdict's sentence.
func checkLimitHistory(t *testing.T, read func(string) string, g *memstate.Cgroup, txt string) {
	t.Helper()
	peak, limit := guestUint(t, read("oom-peak")), guestUint(t, read("oom-max"))
	ev := map[string]uint64{}
	for _, l := range strings.Split(read("oom-events"), "\n") {
		if k, v, ok := strings.Cut(l, " "); ok {
			ev[k] = guestUint(t, v)
		}
	}
	if after := read("oom-after"); after != read("oom-peak")+"\n"+read("oom-events") {
		t.Fatalf("the group's counters changed while memdiag mem ran: before %s %q, after %q", read("oom-peak"), read("oom-events"), after)
	}
	t.Logf("guest kernel: /memdiag-oom memory.peak %d, memory.max %d, memory.events %v", peak, limit, ev)
	if ev["max"] == 0 || ev["oom_kill"] != 1 || peak == 0 {
		t.Fatalf("the guest's OOM group: memory.events %v, memory.peak %d; want max > 0, oom_kill 1 (the test's premise)", ev, peak)
	}
	if g == nil || g.PeakBytes == nil || *g.PeakBytes != peak || g.Events["max"] != ev["max"] || g.Events["oom"] != ev["oom"] {
		t.Fatalf("memdiag mem's /memdiag-oom: %+v; want peak_bytes %d, events max %d, oom %d (the guest's files)", g, peak, ev["max"], ev["oom"])
	}
	// The numbers memdiag prints, parsed back and compared with the
	// kernel's; FormatBytes rounds to 0.1 of its unit.
	pct := fmt.Sprint(int(math.Round(float64(peak) * 100 / float64(limit))))
	note := regexp.MustCompile(`^since the group was made: it reached its limit (\d+) times? \(memory\.events max\)` +
		`(?:, (\d+) times? reclaim could not make room \(memory\.events oom\))?, (\d+) OOM kills? \(memory\.events oom_kill\), ` +
		`its peak was ([\d.]+) MiB \(memory\.peak\), (\d+) % of its limit; now \d+ % of its limit, which is not what it reached$`)
	line := regexp.MustCompile(`(?m)^/memdiag-oom: (.*)\.$`).FindStringSubmatch(txt)
	if line == nil {
		t.Fatalf("memdiag mem's text has no line for /memdiag-oom:\n%s", txt)
	}
	oom := "" // said only when the kernel counted some
	if ev["oom"] > 0 {
		oom = fmt.Sprint(ev["oom"])
	}
	for _, src := range []struct{ name, s string }{{"JSON note", g.Note}, {"text", line[1]}} {
		m := note.FindStringSubmatch(src.s)
		if m == nil {
			t.Errorf("%s of /memdiag-oom:\n  %s\nwant to match\n  %s", src.name, src.s, note)
			continue
		}
		mib, _ := strconv.ParseFloat(m[4], 64)
		if m[1] != fmt.Sprint(ev["max"]) || m[2] != oom || m[3] != fmt.Sprint(ev["oom_kill"]) ||
			math.Abs(mib*(1<<20)-float64(peak)) > 0.05*(1<<20) || m[5] != pct {
			t.Errorf("%s says limit hits %s, oom %q, kills %s, peak %s MiB = %s %%; the guest's files say %d, %q, %d, %d bytes = %s %%",
				src.name, m[1], m[2], m[3], m[4], m[5], ev["max"], oom, ev["oom_kill"], peak, pct)
		}
	}
	// The verdict names it among the groups that reached their limit.
	verdict := regexp.MustCompile(`/memdiag-oom \(now \d+ % of its limit; reached it (\d+) times? \(memory\.events max\), (\d+) OOM kills?, peak (\d+) %\)`)
	if m := verdict.FindStringSubmatch(txt); m == nil || m[1] != fmt.Sprint(ev["max"]) || m[2] != fmt.Sprint(ev["oom_kill"]) || m[3] != pct {
		t.Errorf("memdiag mem's verdict on /memdiag-oom: %q; want limit hits %d, %d OOM kill, peak %s %% (the guest's files):\n%s",
			m, ev["max"], ev["oom_kill"], pct, txt)
	}
}

// guestUint parses a number the guest wrote, failing the test otherwise.
func guestUint(t *testing.T, s string) uint64 {
	t.Helper()
	n, err := strconv.ParseUint(strings.TrimSpace(s), 10, 64)
	if err != nil {
		t.Fatalf("guest file: %v", err)
	}
	return n
}
