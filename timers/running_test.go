package timers

import (
	"os"
	"strings"
	"testing"
)

func TestApplyRunning(t *testing.T) {
	guard := "does nothing when booted with systemd (sbin/init is systemd): the command checks /run/systemd/system and its systemd unit does the work"
	jobs := func() []Job {
		return []Job{
			{Name: "sysstat-collect.timer", Source: Systemd, Active: true},
			{Name: "pmfind.timer", Source: Systemd, Reason: "nothing pulls it in"},
			{Name: "cron.d/x:1", Source: Cron, Active: true},
			{Name: "cron.d/e2scrub_all:1", Source: Cron, Reason: guard, StepsAside: true},
			{Name: "anacron:cron.daily", Source: Anacron, Active: true, ActiveVia: []string{"timers.target → anacron.timer"}},
		}
	}
	// This CI's host: PID 1 is not systemd, no cron daemon.
	js := jobs()
	ApplyRunning(js, Running{Systemd: false, Init: "process_api", Cron: false})
	want := []struct {
		idle bool
		note string
	}{
		{true, `does not fire now: systemd is not running (PID 1 is "process_api")`},
		{false, ""}, // inactive by its files: nothing to add
		{true, "does not run now: no cron daemon is running"},
		{false, "does not run now: no cron daemon is running (were one running, its /run/systemd/system check would let it through: systemd is not running)"},
		{true, "does not run now: anacron is started by a systemd timer and systemd is not running"},
	}
	for i, w := range want {
		if js[i].IdleNow != w.idle || js[i].LiveNote != w.note {
			t.Errorf("%s: IdleNow %v LiveNote %q; want %v %q", js[i].Name, js[i].IdleNow, js[i].LiveNote, w.idle, w.note)
		}
		if js[i].Active != jobs()[i].Active || js[i].Reason != jobs()[i].Reason {
			t.Errorf("%s: Active/Reason changed; they keep what the files say", js[i].Name)
		}
	}
	// Whether each runs now, and why not: the one sentence timers --all
	// and analyze's "Not named" both print (Runs; timers --all's ACTIVE
	// column: report/timersreport's TestActiveColumn).
	wantRuns := []struct {
		runs bool
		why  string
	}{
		{false, want[0].note},
		{false, "nothing pulls it in"},
		{false, want[2].note},
		{false, want[3].note}, // not "would run now": no cron daemon runs it
		{false, want[4].note},
	}
	for i, w := range wantRuns {
		if runs, why := Runs(&js[i]); runs != w.runs || why != w.why {
			t.Errorf("%s: Runs %v %q; want %v %q", js[i].Name, runs, why, w.runs, w.why)
		}
	}
	// The same on the recorded jobs of a recording made before runs_now
	// (trial s6's runD: "would run now …, but no cron daemon is running").
	old := Job{Name: "cron.d/sysstat:6", Source: Cron, Reason: guard,
		LiveNote: "would run now (systemd is not running, so its /run/systemd/system check lets it through), but no cron daemon is running"}
	if runs, why := Runs(&old); runs || why != old.LiveNote {
		t.Errorf("old recording's guarded line: Runs %v %q; want false and its live note", runs, why)
	}
	// cron runs, systemd does not: the guarded line runs after all.
	js = jobs()
	ApplyRunning(js, Running{Systemd: false, Init: "sh", Cron: true})
	if js[2].IdleNow || !strings.HasPrefix(js[3].LiveNote, "runs now after all") {
		t.Errorf("cron running: %+v / %+v", js[2], js[3])
	}
	if runs, why := Runs(&js[3]); !runs || why != js[3].LiveNote {
		t.Errorf("cron running: guarded line Runs %v %q; want true, its live note", runs, why)
	}
	// A systemd host: nothing to say.
	js = jobs()
	ApplyRunning(js, Running{Systemd: true, Init: "systemd", Cron: true})
	for _, j := range js {
		if j.IdleNow || j.LiveNote != "" {
			t.Errorf("systemd host: %s IdleNow %v %q", j.Name, j.IdleNow, j.LiveNote)
		}
		if runs, why := Runs(&j); runs != j.Active || (!runs && why != j.Reason) {
			t.Errorf("systemd host: %s Runs %v %q; want what its files say", j.Name, runs, why)
		}
	}
}

func TestProbeRunning(t *testing.T) {
	if _, ok := ProbeRunning("testdata"); ok {
		t.Error("a fixture root has no running state")
	}
	r, ok := ProbeRunning("/")
	if !ok {
		t.Fatal("/ not probed")
	}
	_, err := os.Stat("/run/systemd/system")
	if r.Systemd != (err == nil) {
		t.Errorf("Systemd = %v, but stat /run/systemd/system: %v", r.Systemd, err)
	}
	comm, err := os.ReadFile("/proc/1/comm")
	if err == nil && r.Init != strings.TrimSpace(string(comm)) {
		t.Errorf("Init = %q, /proc/1/comm %q", r.Init, comm)
	}
}

// The cgroup of a system timer's service, as systemd names it
// (systemd.slice(5): "Slice units … foo-bar.slice is contained in
// foo.slice"; instances of a template in system-<template>.slice, as
// /sys/fs/cgroup/system.slice/system-getty.slice/getty@tty1.service).
func TestUnitCgroup(t *testing.T) {
	for _, c := range []struct{ slice, unit, want string }{
		{"", "man-db.service", "/system.slice/man-db.service"},
		{"s6app.slice", "s6-export.service", "/s6app.slice/s6-export.service"},
		{"app-batch-night.slice", "x.service", "/app.slice/app-batch.slice/app-batch-night.slice/x.service"},
		{"", "getty@tty1.service", "/system.slice/system-getty.slice/getty@tty1.service"},
		{"", "e2scrub@-.service", "/system.slice/system-e2scrub.slice/e2scrub@-.service"},
		{"", "foo-bar@x.service", `/system.slice/system-foo\x2dbar.slice/foo-bar@x.service`},
		{"-.slice", "x.service", "/x.service"},
	} {
		if got := unitCgroup(c.slice, c.unit); got != c.want {
			t.Errorf("unitCgroup(%q, %q) = %q; want %q", c.slice, c.unit, got, c.want)
		}
	}
}

// The inventory gives each system timer its service's cgroup, and none
// to user timers and cron lines (edge fixture).
func TestInventoryCgroup(t *testing.T) {
	jobs, err := Inventory(fixture(t, "edge"), InventoryOptions{Users: true})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"edge-override.timer":  "/system.slice/edge-work.service", // Unit=edge-work.service
		"backup@nightly.timer": "/system.slice/system-backup.slice/backup@nightly.service",
		"user:sync.timer":      "",
	}
	seen := 0
	for _, j := range jobs {
		if w, ok := want[j.Name]; ok {
			seen++
			if j.Cgroup != w {
				t.Errorf("%s: cgroup %q; want %q", j.Name, j.Cgroup, w)
			}
		}
		if j.Source != Systemd && j.Cgroup != "" {
			t.Errorf("%s (%s): cgroup %q; want none", j.Name, j.Source, j.Cgroup)
		}
	}
	if seen != len(want) {
		t.Errorf("found %d of %d jobs", seen, len(want))
	}
}

// A timer whose live state differs from its files: started by hand
// (systemctl start) though nothing pulls it in — it fires; enabled but
// stopped (systemctl stop, confirm's hold) — it does not. The nspawn
// container's test found the first: started timers were "cannot run
// here". Without systemd running, the live state is not there to read.
func TestApplyRunningLiveActive(t *testing.T) {
	yes, no := true, false
	jobs := func() []Job {
		return []Job{
			{Name: "started.timer", Source: Systemd, Reason: "nothing pulls it in", LiveActive: &yes},
			{Name: "stopped.timer", Source: Systemd, Active: true, LiveActive: &no},
			{Name: "as-files.timer", Source: Systemd, Active: true, LiveActive: &yes},
			{Name: "unread.timer", Source: Systemd, Reason: "nothing pulls it in"},
		}
	}
	js := jobs()
	ApplyRunning(js, Running{Systemd: true, Init: "systemd"})
	for i, w := range []struct {
		runs, idle bool
		note       string
	}{
		{true, false, startedNote},
		{false, true, stoppedNote},
		{true, false, ""},
		{false, false, ""},
	} {
		runs, _ := Runs(&js[i])
		if runs != w.runs || js[i].IdleNow != w.idle || js[i].LiveNote != w.note {
			t.Errorf("%s: runs %v IdleNow %v LiveNote %q; want %v %v %q", js[i].Name, runs, js[i].IdleNow, js[i].LiveNote, w.runs, w.idle, w.note)
		}
	}
	js = jobs()
	ApplyRunning(js, Running{Systemd: false, Init: "process_api"})
	if runs, _ := Runs(&js[0]); runs {
		t.Errorf("started.timer runs without systemd running")
	}
}

// TestStepsAsideFromFiles: on the Debian fixture (booted with systemd),
// exactly the crontab lines that check /run/systemd/system, in their
// command or the script they run, step aside; a line held by confirm
// does not (its reason is the hold).
func TestStepsAsideFromFiles(t *testing.T) {
	jobs := mustInventory(t, "debian")
	n := 0
	for _, j := range jobs {
		guard := strings.HasPrefix(j.Reason, "does nothing when booted with systemd")
		if j.StepsAside != guard {
			t.Errorf("%s: StepsAside %v, reason %q", j.Name, j.StepsAside, j.Reason)
		}
		if j.StepsAside {
			n++
		}
	}
	if n < 2 {
		t.Errorf("%d lines step aside on the Debian fixture; want its e2scrub_all and sysstat lines at least", n)
	}
}
