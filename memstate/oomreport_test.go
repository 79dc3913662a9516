package memstate

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func parseFile(t *testing.T, file string, o LogOptions) []OOMKill {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", file))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ks, err := ParseKernelLogWith(f, file, o)
	if err != nil {
		t.Fatal(err)
	}
	return ks
}

// logForm is one of the forms users paste a kernel log in (testdata
// file) and what the first kill's time reads as in it: since boot for
// kmsg and dmesg, the wall time the log prints for dmesg -T and journalctl.
type logForm struct {
	file      string
	since     time.Duration
	time      time.Time
	timeInLog bool
}

// everyForm parses each form of one capture, wants n kills and the first
// equal to want (with the form's time; CgroupStats left to more), then
// hands the kills to more.
func everyForm(t *testing.T, o LogOptions, forms []logForm, n int, want OOMKill, more func(t *testing.T, ks []OOMKill)) {
	t.Helper()
	for _, f := range forms {
		t.Run(filepath.Base(f.file), func(t *testing.T) {
			ks := parseFile(t, f.file, o)
			if len(ks) != n {
				t.Fatalf("%d kills, want %d", len(ks), n)
			}
			w := want
			w.SinceBoot, w.Time, w.TimeFromLog = f.since, f.time, f.timeInLog
			if d := cmp.Diff(w, ks[0], cmpopts.IgnoreFields(OOMKill{}, "CgroupStats")); d != "" {
				t.Errorf("first kill (-want +got):\n%s", d)
			}
			more(t, ks)
		})
	}
}

// TestOOMReportShmemEveryForm: two real memcg OOM kills of this CI host
// (6.18, v1; testdata/oom/SOURCE), a group filled with tmpfs data, read
// from the same records in the five forms users paste them. Every figure
// is the report's own, checked by hand against the files.
func TestOOMReportShmemEveryForm(t *testing.T) {
	const k, pg = 1024, 4096
	btime := time.Unix(1796148247, 0).UTC() // the host's /proc/stat at the capture
	now := time.Date(2026, 12, 1, 22, 0, 0, 0, time.UTC)
	o := LogOptions{Boot: btime, Loc: time.UTC, Now: now}
	stamp1 := 12955002632 * time.Microsecond // the first kill line's stamp
	wall := time.Date(2026, 12, 1, 21, 40, 2, 0, time.UTC)
	forms := []logForm{
		{"oom/host618-shmem-oom.kmsg", stamp1, btime.Add(stamp1), false},
		{"oom/host618-shmem-oom.dmesg.txt", stamp1, btime.Add(stamp1), false},
		{"oom/host618-shmem-oom.dmesg-T.txt", 0, wall, true},
		{"oom/host618-shmem-oom.journal.txt", 0, wall, true},
		{"oom/host618-shmem-oom.journal-iso.txt", 0, wall, true},
	}
	u := func(v uint64) *uint64 { return &v }
	want := OOMKill{
		PID: 18594, Comm: "mem-hog", UID: intp(0),
		TotalVMBytes: 1227600 * k, AnonRSSBytes: 9216 * k, FileRSSBytes: 1532 * k,
		// The writer to the tmpfs (18602) asked for the page; the anon
		// hog (18594) was the largest task and was killed.
		Trigger:    &OOMTrigger{Comm: "mem-hog", PID: 18602, GFPMask: "0xcc0(GFP_KERNEL)"},
		Constraint: "memcg", ConstraintRaw: "CONSTRAINT_MEMCG", Cpuset: "/", MemsAllowed: "0",
		OOMCgroup: "/memdiag-mem-shmoom", TaskCgroup: "/memdiag-mem-shmoom",
		CgroupUsageBytes: 65536 * k, CgroupLimitBytes: 65536 * k,
		CgroupSwapCounter: "memory+swap", CgroupSwapUsageBytes: u(65536 * k), CgroupSwapLimitBytes: u(65536 * k),
		// total_rss, total_cache, total_shmem, total_dirty, total_swap; kmem: usage 580kB.
		AtKill: &OOMMemory{AnonBytes: u(11579392), FileBytes: u(54935552), ShmemBytes: u(54935552),
			DirtyBytes: u(0), KernelBytes: u(580 * k), SwapBytes: u(0)},
		Tasks: []OOMTask{
			{PID: 18594, TGID: 18594, Name: "mem-hog", Victim: true, TotalVMBytes: 306900 * pg, RSSBytes: 2687 * pg,
				RSSAnonBytes: u(2304 * pg), RSSFileBytes: u(383 * pg), RSSShmemBytes: u(0), PageTablesBytes: 114688},
			{PID: 18593, TGID: 18593, Name: "sleep", TotalVMBytes: 730 * pg, RSSBytes: 403 * pg,
				RSSAnonBytes: u(0), RSSFileBytes: u(403 * pg), RSSShmemBytes: u(0), PageTablesBytes: 45056},
			{PID: 18602, TGID: 18602, Name: "mem-hog", TotalVMBytes: 323204 * pg, RSSBytes: 831 * pg,
				RSSAnonBytes: u(416 * pg), RSSFileBytes: u(415 * pg), RSSShmemBytes: u(0), PageTablesBytes: 94208},
		},
		PageSizeBytes: 4096, PageSizeFrom: "the victim's rss pages in the task table against its anon+file+shmem-rss",
	}
	everyForm(t, o, forms, 2, want, func(t *testing.T, ks []OOMKill) {
		st := ks[0].CgroupStats
		if len(st) != 1 || st[0].Path != "/memdiag-mem-shmoom" || st[0].Values["total_shmem"] != 54935552 ||
			st[0].Values["shmem"] != 54935552 || st[0].Values["hierarchical_memsw_limit"] != 64<<20 || len(st[0].Values) != 42 {
			t.Errorf("cgroup stats %+v", st)
		}
		// The second kill: the anon hog gone, the writer killed with
		// 61.6 MiB of the 64 MiB in the tmpfs (total_shmem 64634880).
		k2 := ks[1]
		if k2.PID != 18602 || len(k2.Tasks) != 2 || !k2.Tasks[1].Victim || k2.Tasks[0].Name != "sleep" ||
			*k2.AtKill.ShmemBytes != 64634880 || *k2.AtKill.AnonBytes != 1925120 {
			t.Errorf("second kill %+v", k2)
		}
	})
}

// TestOOMReportAnonOverrun: the real 6.18 v1 kill of host618/dev/kmsg,
// a hog allocating anon memory past a 32 MiB limit with no swap allowed.
func TestOOMReportAnonOverrun(t *testing.T) {
	ks := parseFile(t, "host618/dev/kmsg", LogOptions{})
	if len(ks) != 1 {
		t.Fatalf("%d kills", len(ks))
	}
	k := ks[0]
	// total_rss 33300480, total_cache 0; kmem: usage 248kB; the victim's row
	// 8511 pages = 32384 + 1660 kB.
	if *k.AtKill.AnonBytes != 33300480 || *k.AtKill.FileBytes != 0 || *k.AtKill.KernelBytes != 248*1024 ||
		k.Trigger.PID != 13922 || len(k.Tasks) != 1 || k.Tasks[0].RSSBytes != 8511*4096 || k.PageSizeBytes != 4096 {
		t.Errorf("kill %+v %+v", k, k.AtKill)
	}
	// Its cause in words: words_test.go.
}

// TestOOMReportUML61V2: real 6.1 reports (testdata/SOURCE, uml61): a v2
// memcg kill, whose memory.stat /dev/kmsg sends as one record with \x0a
// between lines, and a global OOM with its Mem-Info summary.
func TestOOMReportUML61V2(t *testing.T) {
	const k, pg = 1024, 4096
	u := func(v uint64) *uint64 { return &v }
	ks := parseFile(t, "uml61/dev/kmsg", LogOptions{})
	if len(ks) != 2 {
		t.Fatalf("%d kills, want 2", len(ks))
	}
	m := ks[0]
	if d := cmp.Diff(&OOMMemory{AnonBytes: u(33394688), FileBytes: u(49152), ShmemBytes: u(0), DirtyBytes: u(0),
		KernelBytes: u(110592), SwapBytes: u(0)}, m.AtKill); d != "" {
		t.Errorf("memcg AtKill (-want +got):\n%s", d)
	}
	if m.CgroupSwapCounter != "swap" || *m.CgroupSwapLimitBytes != 0 || m.Trigger.Comm != "tail" ||
		len(m.Tasks) != 1 || m.Tasks[0].RSSBytes != 8437*pg || m.Tasks[0].PageTablesBytes != 98304 || m.Tasks[0].RSSAnonBytes != nil {
		t.Errorf("memcg kill %+v", m)
	}
	// Its cause in words: words_test.go.
	g := ks[1]
	// Node 0 active_anon:4kB inactive_anon:154688kB active_file:1116kB
	// inactive_file:928kB … shmem:0kB; Free swap = 0kB, Total swap = 0kB
	// (swapoff); 167338 pages RAM − 123901 reserved.
	if d := cmp.Diff(&OOMMemory{AnonBytes: u(154692 * k), FileBytes: u(2044 * k), ShmemBytes: u(0), DirtyBytes: u(0),
		RAMBytes: u((167338 - 123901) * pg), SwapFreeBytes: u(0), SwapTotalBytes: u(0)}, g.AtKill); d != "" {
		t.Errorf("global AtKill (-want +got):\n%s", d)
	}
	if g.Constraint != "global" || g.Trigger.GFPMask != "0x140cca(GFP_HIGHUSER_MOVABLE|__GFP_COMP)" || g.TaskCgroup != "/" {
		t.Errorf("global kill %+v", g)
	}
	// Its cause in words: words_test.go.
}

// TestOOMReportPublic: excerpts of real logs users posted
// (testdata/oom/public/SOURCE names each thread).
func TestOOMReportPublic(t *testing.T) {
	const k, pg = 1024, 4096
	now := time.Date(2026, 12, 1, 22, 0, 0, 0, time.UTC)
	o := LogOptions{Loc: time.UTC, Now: now}

	// 3.10 (RHEL 7), dmesg -T: one-line KB stats, nr_ptes, a sacrificed child.
	ks := parseFile(t, "oom/public/k8s-56891-3.10-dmesg-T.txt", o)
	if len(ks) != 1 {
		t.Fatalf("k8s-56891: %d kills", len(ks))
	}
	j := ks[0]
	if j.PID != 28438 || j.Constraint != "memcg" || !j.Time.Equal(time.Date(2017, 12, 7, 0, 5, 15, 0, time.UTC)) || !j.TimeFromLog ||
		*j.AtKill.AnonBytes != 524188*k || *j.AtKill.FileBytes != 32*k || j.AtKill.ShmemBytes != nil || *j.AtKill.SwapBytes != 524356*k ||
		len(j.Tasks) != 1 || j.Tasks[0].RSSBytes != 119961*pg || j.Tasks[0].PageTablesBytes != 1661*pg || j.Tasks[0].SwapBytes != 136409*pg ||
		j.Tasks[0].OOMScoreAdj != -998 || j.PageSizeBytes != pg {
		t.Errorf("k8s-56891: %+v %+v", j, j.AtKill)
	}
	// Its cause in words: words_test.go.

	// RHEL 7 syslog: "Killed process N (c), UID 0, total-vm:…", no year.
	ks = parseFile(t, "oom/public/ltp-1080-3.10-syslog.txt", o)
	if len(ks) != 3 || ks[1].PID != 42453 || ks[1].Constraint != "memcg" || *ks[1].UID != 0 || ks[1].FileRSSBytes != 164*k ||
		!ks[2].Time.Equal(time.Date(2026, 8, 16, 20, 29, 54, 0, time.UTC)) || ks[0].Constraint != "" {
		t.Errorf("ltp-1080: %+v", ks)
	}
	// Its cause in words: words_test.go.

	// syslog with the kernel's stamp after it: the syslog time wins.
	ks = parseFile(t, "oom/public/docker-for-linux-1001-kernlog.txt", o)
	if len(ks) != 2 || ks[1].Comm != "(resolved)" || ks[1].SinceBoot != 518061172*time.Microsecond ||
		!ks[0].Time.Equal(time.Date(2026, 5, 15, 23, 9, 30, 0, time.UTC)) || ks[0].Constraint != "global" || ks[0].AnonRSSBytes != 4288*k {
		t.Errorf("docker-for-linux-1001: %+v", ks)
	}

	// 5.4 dmesg: the kill, then a new report's first lines (no kill yet).
	ks = parseFile(t, "oom/public/reportportal-203-5.4-dmesg.txt", o)
	if len(ks) != 1 || ks[0].PID != 63214 || ks[0].ShmemRSSBytes != 92*k || ks[0].Constraint != "memcg" || *ks[0].UID != 0 {
		t.Errorf("reportportal-203: %+v", ks)
	}

	// A report cut off before its kill line is no kill.
	if ks = parseFile(t, "oom/public/kubedirector-356-4.x-dmesg.txt", o); len(ks) != 0 {
		t.Errorf("kubedirector-356: %+v", ks)
	}
}

func TestOOMReportForms(t *testing.T) {
	// dmesg -x prefixes and continuation lines of a multi-line message
	// (dmesg and journalctl print them indented under the first).
	ks, err := ParseKernelLogWith(strings.NewReader(formsLog), "x", LogOptions{})
	if err != nil || len(ks) != 1 {
		t.Fatalf("%+v %v", ks, err)
	}
	// Its cause in words: words_test.go.
	if ks[0].PageSizeFrom != "assumed (4 KiB): the report does not tell" {
		t.Errorf("PageSizeFrom = %q", ks[0].PageSizeFrom)
	}
	// A bad stamp names the line.
	_, err = ParseKernelLogWith(strings.NewReader("ok\n6,1,99999999999999999999,-;m\n"), "log", LogOptions{})
	if err == nil || !strings.HasPrefix(err.Error(), "log:2: ") {
		t.Errorf("err = %v", err)
	}
}

// TestOOMReportSwapEveryForm: a real memcg OOM kill of this CI host
// (6.18, v1; testdata/SOURCE) in a group whose swap is not limited: the
// anon hog pushed 15.3 MiB into a 16 MiB swap file, and with the swap
// full it was killed. The cause line must say what the group held in
// swap; whether the host's swap was full is not in a memcg report.
func TestOOMReportSwapEveryForm(t *testing.T) {
	const k, pg = 1024, 4096
	btime := time.Unix(1796148247, 0).UTC() // the host's /proc/stat at the capture
	now := time.Date(2026, 12, 2, 4, 0, 0, 0, time.UTC)
	o := LogOptions{Boot: btime, Loc: time.UTC, Now: now}
	stamp := 34436157430 * time.Microsecond // the kill line's stamp
	wall := time.Date(2026, 12, 2, 3, 38, 3, 0, time.UTC)
	forms := []logForm{
		{"oom/host618-swap-oom.kmsg", stamp, btime.Add(stamp), false},
		{"oom/host618-swap-oom.dmesg.txt", stamp, btime.Add(stamp), false},
		{"oom/host618-swap-oom.dmesg-x.txt", stamp, btime.Add(stamp), false},
		{"oom/host618-swap-oom.dmesg-T.txt", 0, wall, true},
		{"oom/host618-swap-oom.journal.txt", 0, wall, true},
		{"oom/host618-swap-oom.journal-iso.txt", 0, wall, true},
	}
	u := func(v uint64) *uint64 { return &v }
	want := OOMKill{
		PID: 19019, Comm: "hog", UID: intp(0),
		TotalVMBytes: 1293208 * k, AnonRSSBytes: 31616 * k, FileRSSBytes: 1588 * k,
		Trigger:    &OOMTrigger{Comm: "hog", PID: 19022, GFPMask: "0xcc0(GFP_KERNEL)"},
		Constraint: "memcg", ConstraintRaw: "CONSTRAINT_MEMCG", Cpuset: "/", MemsAllowed: "0",
		OOMCgroup: "/check19-swapfull", TaskCgroup: "/check19-swapfull",
		CgroupUsageBytes: 32768 * k, CgroupLimitBytes: 32768 * k,
		// memory+swap: usage 48396kB, limit 9007199254740988kB (none).
		CgroupSwapCounter: "memory+swap", CgroupSwapUsageBytes: u(48396 * k),
		// total_rss, total_cache, total_shmem, total_dirty, total_swap
		// (48396 − 32768 kB); kmem: usage 280kB.
		AtKill: &OOMMemory{AnonBytes: u(32481280), FileBytes: u(0), ShmemBytes: u(0),
			DirtyBytes: u(0), KernelBytes: u(280 * k), SwapBytes: u(16003072)},
		Tasks: []OOMTask{
			{PID: 19019, TGID: 19019, Name: "hog", Victim: true, TotalVMBytes: 323302 * pg, RSSBytes: 8301 * pg,
				RSSAnonBytes: u(7904 * pg), RSSFileBytes: u(397 * pg), RSSShmemBytes: u(0), PageTablesBytes: 192512,
				SwapBytes: 4064 * pg},
		},
		PageSizeBytes: 4096, PageSizeFrom: "the victim's rss pages in the task table against its anon+file+shmem-rss",
	}
	everyForm(t, o, forms, 1, want, func(t *testing.T, ks []OOMKill) {
		st := ks[0].CgroupStats
		if len(st) != 1 || st[0].Path != "/check19-swapfull" || st[0].Values["total_swap"] != 16003072 ||
			st[0].Values["swapcached"] != 770048 || st[0].Values["total_writeback"] != 409600 || len(st[0].Values) != 42 {
			t.Errorf("cgroup stats %+v", st)
		}
	})
}

// formsLog is one memcg OOM kill with dmesg -x prefixes and continuation
// lines of a multi-line message (dmesg and journalctl print them
// indented under the first), and no page size in the report.
const formsLog = "kern  :warn  : [  10.000001] x invoked oom-killer: gfp_mask=0xcc0(GFP_KERNEL), order=0, oom_score_adj=0\n" +
	"kern  :info  : [  10.000002] memory: usage 1024kB, limit 1024kB, failcnt 3\n" +
	"kern  :info  : [  10.000003] swap: usage 0kB, limit 0kB, failcnt 0\n" +
	"kern  :info  : [  10.000004] Memory cgroup stats for /g:\n" +
	"kern  :info  : [  10.000005] anon 4096\n" +
	"                             file 1044480\n" +
	"                             shmem 1040384\n" +
	"kern  :info  : [  10.000006] oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),cpuset=/,mems_allowed=0,oom_memcg=/g,task_memcg=/g,task=x,pid=5,uid=0\n" +
	"kern  :err   : [  10.000007] Memory cgroup out of memory: Killed process 5 (x) total-vm:8kB, anon-rss:4kB, file-rss:0kB, shmem-rss:0kB, UID:0 pgtables:4kB oom_score_adj:0\n"
