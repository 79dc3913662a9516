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
			{Name: "cron.d/e2scrub_all:1", Source: Cron, Reason: guard},
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
		{false, "would run now (systemd is not running, so its /run/systemd/system check lets it through), but no cron daemon is running"},
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
	// cron runs, systemd does not: the guarded line runs after all.
	js = jobs()
	ApplyRunning(js, Running{Systemd: false, Init: "sh", Cron: true})
	if js[2].IdleNow || !strings.HasPrefix(js[3].LiveNote, "runs now after all") {
		t.Errorf("cron running: %+v / %+v", js[2], js[3])
	}
	// A systemd host: nothing to say.
	js = jobs()
	ApplyRunning(js, Running{Systemd: true, Init: "systemd", Cron: true})
	for _, j := range js {
		if j.IdleNow || j.LiveNote != "" {
			t.Errorf("systemd host: %s IdleNow %v %q", j.Name, j.IdleNow, j.LiveNote)
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
