package memstate_test

// The words report/mem writes for what this package reads from its real
// fixtures (testdata/SOURCE): the verdict sentence, each cgroup's note
// and each OOM kill's cause. memstate returns figures and flags; these
// tests pin the sentences a user reads, end to end from the files.

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memdiag/memdiag/internal/testutil"
	"github.com/memdiag/memdiag/lru"
	"github.com/memdiag/memdiag/memstate"
	"github.com/memdiag/memdiag/psi"
	"github.com/memdiag/memdiag/report/mem"
)

func u64(v uint64) *uint64 { return &v }

// words is r as report/mem writes it.
func words(r memstate.Report) memstate.Report { return mem.Described(r) }

// note is the note report/mem writes for cg.
func note(cg memstate.Cgroup) string {
	return words(memstate.Report{Cgroups: []memstate.Cgroup{cg}}).Cgroups[0].Note
}

// sentence is the host verdict sentence for h, a and the groups cgs.
func sentence(h memstate.Host, prev, cur memstate.Snapshot, cgs []memstate.Cgroup) memstate.Verdict {
	r := memstate.Build(time.Unix(0, 0).UTC(), prev, cur, h, nil, memstate.ProcScan{}, cgs, memstate.KernelLog{})
	return words(r).Verdict
}

func TestWordsVerdict(t *testing.T) {
	c := memstate.Fixture(t)
	h, _, err := c.Host()
	if err != nil {
		t.Fatal(err)
	}
	// testdata/activity: 285 refaults in 1.0176 s = 280/s.
	v := sentence(h, memstate.ActivityOf(t, "0"), memstate.ActivityOf(t, "1"), nil)
	if want := []string{"280 refaults/s"}; strings.Join(v.Reasons, "|") != strings.Join(want, "|") {
		t.Errorf("Reasons = %q, want %q", v.Reasons, want)
	}
	if want := `A "used" figure that counts cache would show 1.8 GiB of 23.5 GiB (8 %); 1.3 GiB of it is page cache and slab the kernel gives back on demand, so 551.5 MiB is not available for reuse (processes' anon memory, shmem, kernel memory and reserves).` +
		` Over the last 1s memory was under pressure (280 refaults/s), but the host is not short of it (23.0 GiB available, no host-wide reclaim): the pressure comes from cgroup limits.` +
		` The kernel counted 2 OOM kills since boot (/proc/vmstat oom_kill) but its log does not say which.`; v.Sentence != want {
		t.Errorf("Sentence = %q\nwant       %q", v.Sentence, want)
	}

	// host618 and the vmstat read 1 s later: calm, said so.
	h, prev, cur := memstate.CalmSnapshots(t)
	v = sentence(h, prev, cur, nil)
	if v.Reasons != nil || !strings.Contains(v.Sentence, "Over the last 1s the kernel was not under memory pressure (PSI memory some 0.0 %, 0 refaults, no direct reclaim), so the cache is not the problem.") {
		t.Errorf("calm: reasons %q, Sentence = %q", v.Reasons, v.Sentence)
	}
	// Without an interval nothing is claimed about pressure.
	if v = sentence(h, prev, prev, nil); !strings.Contains(v.Sentence, " Pressure was not measured (no interval between two reads). The kernel counted 1 OOM kill since boot") {
		t.Errorf("no interval: Sentence = %q", v.Sentence)
	}
}

func TestWordsVerdictReasons(t *testing.T) {
	vm := func(s string) *lru.VMStat {
		v, err := lru.ParseVMStat(strings.NewReader(s), "vmstat")
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	// Before 4.8 direct reclaim was counted per zone.
	prev := memstate.Snapshot{Time: time.Unix(0, 0), VMStat: vm(
		"pgscan_direct_dma32 10\npgscan_direct_normal 100\npgscan_direct_throttle 5\nallocstall 3\nworkingset_refault 1000\n")}
	cur := memstate.Snapshot{Time: time.Unix(2, 0), VMStat: vm(
		"pgscan_direct_dma32 30\npgscan_direct_normal 600\npgscan_direct_throttle 9\nallocstall 7\nworkingset_refault 1100\n")}
	if v := sentence(memstate.Host{}, prev, cur, nil); len(v.Reasons) != 1 || v.Reasons[0] != "direct reclaim (4 stalls, 520 pages scanned)" {
		t.Errorf("Reasons = %q", v.Reasons)
	}
	// 5.8+: cgroup-limit reclaim, figures as read live on this host
	// while a 64 MiB v1 group was OOM-killed.
	prev = memstate.Snapshot{Time: time.Unix(0, 0), VMStat: vm("pgscan_kswapd 10\npgscan_direct 0\npgscan_anon 5\npgscan_file 100\nallocstall_normal 0\n")}
	cur = memstate.Snapshot{Time: time.Unix(6, 0), VMStat: vm("pgscan_kswapd 10\npgscan_direct 0\npgscan_anon 5\npgscan_file 15460\nallocstall_normal 0\n")}
	plenty := memstate.Host{TotalBytes: 24 << 30, AvailableBytes: 21 << 30}
	if v := sentence(plenty, prev, cur, nil); !strings.Contains(v.Sentence, "Over the last 6s memory was under pressure (cgroup-limit reclaim (15360 pages scanned)), but the host is not short of it (21.0 GiB available, no host-wide reclaim): the pressure comes from cgroup limits.") {
		t.Errorf("Sentence = %q", v.Sentence)
	}
	short := memstate.Host{TotalBytes: 24 << 30, AvailableBytes: 1 << 30}
	if v := sentence(short, prev, cur, nil); !strings.Contains(v.Sentence, "the kernel was under memory pressure: cgroup-limit reclaim") {
		t.Errorf("short host: Sentence = %q", v.Sentence)
	}
}

// TestWordsCgroupNotesV1 reads real v1 groups of this CI host.
func TestWordsCgroupNotesV1(t *testing.T) {
	none := filepath.Join(t.TempDir(), "none")
	shmem, ok, err := memstate.ReadV1(memstate.HostShmemGroup, "/memdiag-mem-shmemfix", none, u64(0))
	if err != nil || !ok {
		t.Fatalf("ReadV1 = %v, %v", ok, err)
	}
	if got, want := note(shmem), "98 % of its limit, mostly page cache (88.0 MiB, reclaimable), 38.0 MiB must stay in RAM (30 % of the limit: its anon 0 B and shmem 38.0 MiB can only go to swap, and no swap is free), working set (usage − inactive file) 38.1 MiB: fine unless reclaiming it stalls the group's tasks; no memory.pressure for it (a v1 group without a v2 twin): watch memory.failcnt and its refaults instead; since the group was made (or its counters were last reset): it reached its limit 241 times (memory.failcnt), its peak was 128.0 MiB (memory.max_usage_in_bytes), 100 % of its limit"; got != want {
		t.Errorf("shmemfix note = %q\nwant            %q", got, want)
	}
	// The host verdict names the tmpfs part, not only the cache.
	v := sentence(memstate.Host{}, memstate.Snapshot{}, memstate.Snapshot{}, []memstate.Cgroup{shmem})
	if want := "/memdiag-mem-shmemfix (98 % of its limit, mostly reclaimable cache; 38.0 MiB must stay in RAM (30 % of the limit: its anon 0 B and shmem 38.0 MiB can only go to swap, and no swap is free))"; !strings.Contains(v.Sentence, want) {
		t.Errorf("Sentence = %q, want it to contain %q", v.Sentence, want)
	}

	const prot = "testdata/host618-protfix/sys/fs/cgroup/memory/memdiag-mem-protfix"
	cg, ok, err := memstate.ReadV1(prot, "/memdiag-mem-protfix", none, u64(0))
	if err != nil || !ok {
		t.Fatalf("ReadV1 = %v, %v", ok, err)
	}
	if got, want := note(cg), "protections: memory.soft_limit_in_bytes 64.0 MiB (under host pressure reclaimed down to it first)"; got != want {
		t.Errorf("protfix note = %q, want %q", got, want)
	}
	cg.UsageBytes = 125 << 20
	memstate.Judge(&cg, u64(20<<20), u64(32<<20))
	if want := "4.0 MiB must stay in RAM (3 % of the limit: its anon 0 B and shmem 24.0 MiB can only go to swap, and swap can take only 20.0 MiB of them)"; !strings.Contains(note(cg), want) {
		t.Errorf("Note = %q, want it to contain %q", note(cg), want)
	}
	zero := uint64(0)
	cg.Swappiness = &zero
	memstate.Judge(&cg, u64(20<<20), nil)
	if !strings.Contains(note(cg), "its memory.swappiness is 0") {
		t.Errorf("swappiness 0: Note %q", note(cg))
	}

	cgs, err := memstate.CgroupsWithHost(t, memstate.Fixture(t))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := note(cgs[1]), "98 % of its limit, mostly page cache (42.0 MiB, reclaimable), 20.1 MiB must stay in RAM (31 % of the limit: its anon 20.1 MiB and shmem 0 B can only go to swap, and no swap is free), working set (usage − inactive file) 20.6 MiB: fine unless reclaiming it stalls the group's tasks; its memory PSI is some avg10=0.24 %; since the group was made (or its counters were last reset): it reached its limit 1015 times (memory.failcnt), its peak was 64.0 MiB (memory.max_usage_in_bytes), 100 % of its limit"; cgs[1].Path != "/memdiag-mem-fixture" || got != want {
		t.Errorf("%s note = %q\nwant %q", cgs[1].Path, got, want)
	}
}

// TestWordsJudged: the notes of groups judged from given figures.
func TestWordsJudged(t *testing.T) {
	cg := memstate.Cgroup{Path: "/a", Version: 2, UsageBytes: 61 << 20, LimitBytes: u64(64 << 20), AnonBytes: 58 << 20, FileBytes: 3 << 20}
	memstate.Judge(&cg, nil, nil)
	if n := note(cg); !strings.Contains(n, "mostly anon/shmem: 58.0 MiB must stay in RAM (91 % of the limit: its anon 58.0 MiB and shmem 0 B can only go to swap, and no swap is free); cache 3.0 MiB") ||
		!strings.Contains(n, "no memory.pressure for it (no PSI in this kernel): watch memory.events max and its refaults instead") {
		t.Errorf("Note = %q", n)
	}
	// Mostly cache, but the group's PSI says its tasks stall on reclaim.
	cg = memstate.Cgroup{UsageBytes: 63 << 20, LimitBytes: u64(64 << 20), AnonBytes: 3 << 20, FileBytes: 60 << 20,
		PSI: &psi.Resource{Some: psi.Line{Avg10: 2.17}}}
	memstate.Judge(&cg, nil, nil)
	if got, want := note(cg), "98 % of its limit, mostly page cache (60.0 MiB, reclaimable), 3.0 MiB must stay in RAM (5 % of the limit: its anon 3.0 MiB and shmem 0 B can only go to swap, and no swap is free), working set (usage − inactive file) 63.0 MiB; but its memory PSI is some avg10=2.17 %: reclaiming it stalls the group's tasks, its working set does not fit the limit"; got != want {
		t.Errorf("Note = %q, want %q", got, want)
	}
	// The same stall with a working set well under the limit: not told
	// it does not fit (the trial's group: 111 MiB of 240 MiB).
	cg = memstate.Cgroup{UsageBytes: 230 << 20, LimitBytes: u64(240 << 20), AnonBytes: 20 << 20, FileBytes: 210 << 20, InactiveFileBytes: 119 << 20,
		PSI: &psi.Resource{Some: psi.Line{Avg10: 3.5}}}
	memstate.Judge(&cg, nil, nil)
	if n := note(cg); strings.Contains(n, "does not fit") || !strings.Contains(n, "reclaiming it stalls the group's tasks (the working set estimate is under the limit") {
		t.Errorf("working set 111 MiB of 240: Note = %q", n)
	}
	// Swap can take all the anon: nothing must stay in RAM, said so.
	cg = memstate.Cgroup{Path: "/b", Version: 1, UsageBytes: 62 << 20, LimitBytes: u64(64 << 20), AnonBytes: 20 << 20, FileBytes: 42 << 20}
	memstate.Judge(&cg, u64((1048572-5900)<<10), nil)
	if want := "nothing must stay in RAM (swap can take all its anon 20.0 MiB and shmem 0 B, with 1018.2 MiB free for it)"; !strings.Contains(note(cg), want) {
		t.Errorf("Note = %q, want it to contain %q", note(cg), want)
	}
	v := sentence(memstate.Host{}, memstate.Snapshot{}, memstate.Snapshot{}, []memstate.Cgroup{cg})
	if want := "/b (97 % of its limit, mostly reclaimable cache; nothing must stay in RAM (swap can take all"; !strings.Contains(v.Sentence, want) {
		t.Errorf("Sentence = %q, want it to contain %q", v.Sentence, want)
	}
}

func TestWordsCgroupNotesV2(t *testing.T) {
	cgs := memstate.CgroupsV2Gopsutil(t)
	if got, want := note(cgs[0]), "since the group was made: it reached a memory limit 3 times (memory.events max), though it has none now, its peak was 30.4 MiB (memory.peak)"; got != want {
		t.Errorf("gopsutil note = %q, want %q", got, want)
	}

	// Linux 6.1 under UML (testdata/uml61): a group at its limit, one at
	// memory.high, one OOM-killed at its limit before.
	c := memstate.UML61Fixture(t)
	cgs, err := memstate.CgroupsWithHost(t, c)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"/memdiag-cache": "100 % of its limit, mostly page cache (26.3 MiB, reclaimable), 156.7 KiB must stay in RAM (0 % of the limit: swap can take all its anon 5.2 MiB and shmem 0 B, with 63.7 MiB free for it; 156.7 KiB is kernel memory that cannot be freed), working set (usage − inactive file) 6.6 MiB: fine unless reclaiming it stalls the group's tasks; no memory.pressure for it (no PSI in this kernel): watch memory.events max and its refaults instead; since the group was made: it reached its limit 22369 times (memory.events max), its peak was 32.0 MiB (memory.peak), 100 % of its limit",
		"/memdiag-anon":  "99 % of its memory.high (20.0 MiB): the kernel throttles its allocations and reclaims it there (memory.events high=84), 23.0 MiB of it swapped out; no memory.pressure for it (no PSI in this kernel): watch memory.events max and its refaults instead",
		"/memdiag-oom":   "since the group was made: it reached its limit 69 times (memory.events max), 1 time reclaim could not make room (memory.events oom), 1 OOM kill (memory.events oom_kill), its peak was 32.0 MiB (memory.peak), 100 % of its limit; now 0 % of its limit, which is not what it reached",
	}
	seen := 0
	for _, cg := range words(memstate.Report{Cgroups: cgs}).Cgroups {
		if w, ok := want[cg.Path]; ok {
			seen++
			if cg.Note != w {
				t.Errorf("%s note = %q\nwant %q", cg.Path, cg.Note, w)
			}
		}
	}
	if seen != len(want) {
		t.Errorf("%d of the %d groups found", seen, len(want))
	}

	// The host verdict names the groups near their limit (or
	// memory.high) and tells the two kills apart.
	snap, missing, err := c.Snapshot(time.Unix(1796131900, 0))
	if err != nil || missing == nil {
		t.Fatalf("Snapshot: %v (missing PSI: %v)", err, missing)
	}
	h, _, err := c.Host()
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open("testdata/uml61/dev/kmsg")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	kills, err := memstate.ParseKernelLog(f, "kmsg", time.Unix(1796131835, 0))
	if err != nil {
		t.Fatal(err)
	}
	r := words(memstate.Build(time.Unix(1796131900, 0).UTC(), snap, snap, h, nil, memstate.ProcScan{}, cgs, memstate.KernelLog{Source: "/dev/kmsg", Kills: kills}))
	for _, want := range []string{
		" 2 cgroups near the limit: /memdiag-cache (100 % of its limit, mostly reclaimable cache; 156.7 KiB must stay in RAM (0 % of the limit: swap can take all its anon 5.2 MiB and shmem 0 B, with 63.7 MiB free for it; 156.7 KiB is kernel memory that cannot be freed)), /memdiag-anon (99 % of its memory.high, mostly anon/shmem: 227.8 KiB must stay in RAM (1 % of the memory.high: swap can take all its anon 18.4 MiB and shmem 0 B, with 63.7 MiB free for it; 227.8 KiB is kernel memory that cannot be freed)).",
		// Issue 30 item 5: empty now, OOM-killed at its limit before.
		" 1 cgroup reached its limit before and is below it now: /memdiag-oom (now 0 % of its limit; reached it 69 times (memory.events max), 1 OOM kill, peak 100 %).",
		// 1796131835 + 17.07 s = 2026-12-01 13:30:52 UTC
		" The kernel log has 2 OOM kills (1 at cgroup limits, 1 with the host or a cpuset/mempolicy out of memory); the last tail (PID 846) in / at 2026-12-01 13:30:52 UTC.",
	} {
		if !strings.Contains(r.Verdict.Sentence, want) {
			t.Errorf("sentence lacks %q:\n%s", want, r.Verdict.Sentence)
		}
	}
}

// TestWordsOOMCause: the cause written for each kill of real kernel
// logs (testdata/oom/SOURCE, testdata/oom/public/SOURCE), in every form
// a capture was saved in.
func TestWordsOOMCause(t *testing.T) {
	now := time.Date(2026, 12, 2, 4, 0, 0, 0, time.UTC)
	o := memstate.LogOptions{Boot: time.Unix(1796148247, 0).UTC(), Loc: time.UTC, Now: now}
	forms := func(stem string, ext ...string) []string {
		var out []string
		for _, e := range ext {
			out = append(out, "testdata/oom/"+stem+"."+e)
		}
		return out
	}
	for _, c := range []struct {
		files []string
		i     int
		want  string
	}{
		{forms("host618-shmem-oom", "kmsg", "dmesg.txt", "dmesg-T.txt", "journal.txt", "journal-iso.txt"), 0,
			"shmem-filled /memdiag-mem-shmoom: 52.4 MiB of 64.0 MiB shmem (tmpfs, shared memory: only swap can take it), anon 11.0 MiB, no cache left, no swap allowed (memory+swap limit = memory limit)"},
		{forms("host618-shmem-oom", "kmsg", "journal.txt"), 1,
			"shmem-filled /memdiag-mem-shmoom: 61.6 MiB of 64.0 MiB shmem (tmpfs, shared memory: only swap can take it), anon 1.8 MiB, no cache left, no swap allowed (memory+swap limit = memory limit)"},
		{forms("host618-swap-oom", "kmsg", "dmesg.txt", "dmesg-x.txt", "dmesg-T.txt", "journal.txt", "journal-iso.txt"), 0,
			"anon overrun in /check19-swapfull: 31.0 MiB of 32.0 MiB anon, shmem 0 B, no cache left, 15.3 MiB in swap, the group's swap not limited (the host's free swap is not in a memcg report)"},
		{[]string{"testdata/host618/dev/kmsg"}, 0,
			"anon overrun in /memdiag-mem-oomfix: 31.8 MiB of 32.0 MiB anon, shmem 0 B, no cache left, no swap allowed (memory+swap limit = memory limit)"},
		{[]string{"testdata/uml61/dev/kmsg"}, 0,
			"anon overrun in /memdiag-oom: 31.8 MiB of 32.0 MiB anon, shmem 0 B, no cache left, no swap allowed (memory.swap.max 0)"},
		{[]string{"testdata/uml61/dev/kmsg"}, 1,
			"anon overrun of the host: anon 151.1 MiB of 169.7 MiB RAM, shmem 0 B, 2.0 MiB cache left, no swap"},
		{[]string{"testdata/oom/public/k8s-56891-3.10-dmesg-T.txt"}, 0,
			"anon overrun in /kubepods/pod95387fa4-da9c-11e7-9d36-5254b24cbf5e/6895a3e13439535852d3184ac2aadd26d7363cc035f171545ec7d4ce74073b0b: 511.9 MiB anon, shmem not in the report, no cache left, 512.1 MiB in swap (the swap limit is not in the report)"},
		{[]string{"testdata/oom/public/ltp-1080-3.10-syslog.txt"}, 0,
			"an OOM (what ran out is not in the log): the report holds no memory breakdown (only the victim's own anon-rss 96.0 KiB, file-rss 164.0 KiB, shmem-rss 0 B)"},
	} {
		for _, file := range c.files {
			f, err := os.Open(file)
			if err != nil {
				t.Fatal(err)
			}
			ks, err := memstate.ParseKernelLogWith(f, file, o)
			f.Close()
			if err != nil || len(ks) <= c.i {
				t.Fatalf("%s: %d kills, %v", file, len(ks), err)
			}
			if got := words(memstate.Report{OOM: memstate.OOMReport{Kills: ks}}).OOM.Kills[c.i].Cause; got != c.want {
				t.Errorf("%s kill %d: cause = %q\nwant %q", file, c.i, got, c.want)
			}
		}
	}
	// dmesg -x prefixes and continuation lines, no page size in the report.
	ks, err := memstate.ParseKernelLogWith(strings.NewReader(memstate.FormsLog), "x", memstate.LogOptions{})
	if err != nil || len(ks) != 1 {
		t.Fatalf("%+v %v", ks, err)
	}
	if got, want := words(memstate.Report{OOM: memstate.OOMReport{Kills: ks}}).OOM.Kills[0].Cause, "shmem-filled /g: 1016.0 KiB of 1.0 MiB shmem (tmpfs, shared memory: only swap can take it), anon 4.0 KiB, no cache left, no swap allowed (memory.swap.max 0)"; got != want {
		t.Errorf("Cause = %q, want %q", got, want)
	}
}

// FuzzOOMWords checks that no kernel log's kills panic report/mem's
// words, and that every kill gets a cause and the host a sentence.
func FuzzOOMWords(f *testing.F) {
	testutil.Seed[[]byte](f, "testdata/oom/*.txt", "testdata/oom/*.kmsg", "testdata/oom/public/*.txt", "testdata/*/dev/kmsg")
	boot := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, b []byte) {
		kills, err := memstate.ParseKernelLog(bytes.NewReader(b), "kmsg", boot)
		if err != nil {
			return
		}
		r := words(memstate.Report{OOM: memstate.OOMReport{Kills: kills}})
		for _, k := range r.OOM.Kills {
			if k.Cause == "" {
				t.Fatalf("kill without a cause: %+v", k)
			}
		}
		if len(kills) > 0 && !strings.Contains(r.Verdict.Sentence, "The kernel log has") {
			t.Fatalf("sentence does not say the kills: %q", r.Verdict.Sentence)
		}
	})
}
