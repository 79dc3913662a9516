package timers

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestInventoryJail plants what used to escape --root or hang memdiag: a
// timer unit linked to /dev/zero (read without bound), a drop-in and a
// crontab linked to a host file (quoted line by line in errors), a FIFO
// as a crontab and as a drop-in (blocked forever), an anacron job id
// climbing out of var/spool/anacron, and etc/timezone linked to
// /dev/zero. The inventory ends, each bad file is an error naming it, and
// no error quotes the host file.
func TestInventoryJail(t *testing.T) {
	top := t.TempDir()
	root := filepath.Join(top, "root")
	host := filepath.Join(top, "shadow")
	const secret = "root:$6$hostsecret:19000:0:99999:7:::"
	if err := os.WriteFile(host, []byte(secret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"etc/cron.d", "etc/systemd/system/timers.target.wants", "etc/systemd/system/good.timer.d", "lib/systemd/system", "var/spool/anacron"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write := func(rel, s string) {
		if err := os.WriteFile(filepath.Join(root, rel), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	link := func(target, rel string) {
		if err := os.Symlink(target, filepath.Join(root, rel)); err != nil {
			t.Fatal(err)
		}
	}
	write("lib/systemd/system/good.timer", "[Timer]\nOnCalendar=daily\n")
	write("lib/systemd/system/good.service", "[Service]\nExecStart=/bin/true\n")
	link("/lib/systemd/system/good.timer", "etc/systemd/system/timers.target.wants/good.timer")
	link("/dev/zero", "etc/systemd/system/zero.timer")
	link("/dev/zero", "etc/systemd/system/timers.target.wants/zero.timer")
	link(host, "etc/systemd/system/good.timer.d/host.conf")
	if err := syscall.Mkfifo(filepath.Join(root, "etc/systemd/system/good.timer.d/fifo.conf"), 0o600); err != nil {
		t.Fatal(err)
	}
	link(host, "etc/cron.d/host")
	if err := syscall.Mkfifo(filepath.Join(root, "etc/cron.d/fifo"), 0o600); err != nil {
		t.Fatal(err)
	}
	write("etc/anacrontab", "1 5 ../../../../shadow run-parts /etc/cron.daily\n1 5 cron.daily run-parts /etc/cron.daily\n")
	link("/dev/zero", "etc/timezone")

	done := make(chan struct{})
	var jobs []Job
	var err error
	go func() {
		defer close(done)
		jobs, err = Inventory(root, InventoryOptions{})
	}()
	select {
	case <-done:
	case <-time.After(2 * time.Minute): // a hang bound: at once unless starved of CPU
		t.Fatal("Inventory did not end in 2 min: a FIFO or device was read")
	}
	if err != nil {
		t.Fatal(err)
	}
	probs := strings.Join(Problems(jobs), "\n")
	for _, want := range []string{
		filepath.Join(root, "etc/systemd/system/good.timer.d/fifo.conf") + ": not a regular file (a FIFO)",
		filepath.Join(root, "etc/cron.d/fifo") + ": not a regular file (a FIFO)",
		filepath.Join(root, "etc/systemd/system/good.timer.d/host.conf") + ": no such file or directory",
		filepath.Join(root, "etc/cron.d/host") + ": no such file or directory",
		filepath.Join(root, "etc/systemd/system/zero.timer") + ": no such file or directory",
		`etc/anacrontab:1: malformed anacrontab line: job id "../../../../shadow" may not contain '/'`,
	} {
		if !strings.Contains(probs, want) {
			t.Errorf("problems lack %q:\n%s", want, probs)
		}
	}
	if strings.Contains(probs, "hostsecret") {
		t.Errorf("a problem quotes the host file:\n%s", probs)
	}
	if z := HostZone(root); z != "" {
		t.Errorf("HostZone = %q from a /dev/zero link", z)
	}
	var good bool
	for _, j := range jobs {
		if j.Name == "good.timer" && len(j.Schedule) == 1 && j.Schedule[0] == "daily" {
			good = true
		}
	}
	if !good {
		t.Errorf("good.timer missing or wrong: %+v", jobs)
	}
}

func TestValidZoneName(t *testing.T) {
	for name, want := range map[string]bool{"Europe/Berlin": true, "UTC": true, "Etc/GMT+5": true, "America/Port-au-Prince": true,
		"": false, "../../etc/passwd": false, "/etc/passwd": false, "Europe/Berlin\x00": false, "a b": false} {
		if got := validZoneName(name); got != want {
			t.Errorf("validZoneName(%q) = %v, want %v", name, got, want)
		}
	}
}
