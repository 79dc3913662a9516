package guest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memdiag/memdiag/internal/testenv"
)

// confirmGuestPart runs in the systemd guest after
// TestSystemdGuestFiresPCPTimers's capture (guestScript): `memdiag
// confirm` on pmlogger_check.timer, polling systemd for the timer's
// state during the run; then a run killed with SIGKILL while the timer
// is held off, and `memdiag confirm --restore`. Every answer is
// systemd's (systemctl is-active), written to /run/out.
const confirmGuestPart = `m=/usr/local/bin/memdiag-e2e
[ -e /proc/pressure/memory ] && echo yes > $out/psi
systemctl is-active pmlogger_check.timer > $out/before 2>&1
$m confirm --job pmlogger_check.timer --pairs 1 --block 4s --yes -f json -- sleep 60 > $out/run1.json 2> $out/run1.err &
pid=$!
: > $out/during
while kill -0 $pid 2>/dev/null; do systemctl is-active pmlogger_check.timer >> $out/during; sleep 0.3; done
wait $pid; echo $? > $out/run1.rc
systemctl is-active pmlogger_check.timer > $out/after-run 2>&1
$m confirm --job pmlogger_check.timer --pairs 1 --block 6s --yes -- sleep 60 > $out/run2.out 2> $out/run2.err &
pid=$!
n=0
until [ "$(systemctl is-active pmlogger_check.timer)" = inactive ] || [ $n -ge 200 ]; do sleep 0.2; n=$((n+1)); done
kill -KILL $pid
wait $pid; echo $? > $out/run2.rc
systemctl is-active pmlogger_check.timer > $out/killed 2>&1
cp /var/lib/memdiag/confirm.state $out/state.json 2>/dev/null
$m confirm --restore > $out/restore.out 2>&1; echo $? > $out/restore.rc
systemctl is-active pmlogger_check.timer > $out/after-restore 2>&1
` + confirmGuestFixPart

// confirmGuestFixPart runs after confirmGuestPart: `memdiag confirm
// --with` a [Service] drop-in for pmlogger_check.service, polling
// systemd for the service's DropInPaths during the run; then a run
// killed with SIGKILL while the drop-in is in place, and `memdiag
// confirm --restore`. Every answer is systemd's (systemctl show).
const confirmGuestFixPart = `printf '[Service]\nIOSchedulingClass=idle\n' > /run/memdiag-fix.conf
dropins() { systemctl show -p DropInPaths --value pmlogger_check.service; }
dropins > $out/fix-before 2>&1
$m confirm --job pmlogger_check.timer --with /run/memdiag-fix.conf --pairs 1 --block 4s --yes -f json -- sleep 60 > $out/fix1.json 2> $out/fix1.err &
pid=$!
: > $out/fix-during
while kill -0 $pid 2>/dev/null; do echo "[$(dropins)]" >> $out/fix-during; sleep 0.3; done
wait $pid; echo $? > $out/fix1.rc
dropins > $out/fix-after-run 2>&1
ls -a /etc/systemd/system/pmlogger_check.service.d > $out/fix-dir 2>&1
$m confirm --job pmlogger_check.timer --with /run/memdiag-fix.conf --pairs 1 --block 6s --yes -- sleep 60 > $out/fix2.out 2> $out/fix2.err &
pid=$!
n=0
until dropins | grep -q 50-memdiag-confirm.conf || [ $n -ge 200 ]; do sleep 0.2; n=$((n+1)); done
kill -KILL $pid
wait $pid
dropins > $out/fix-killed 2>&1
$m confirm --restore > $out/fix-restore.out 2>&1; echo $? > $out/fix-restore.rc
dropins > $out/fix-after-restore 2>&1
ls -a /etc/systemd/system/pmlogger_check.service.d > $out/fix-dir-restore 2>&1`

// checkConfirmGuest checks what confirmGuestPart wrote in guest g: memdiag
// confirm holds pcp's pmlogger_check.timer off in a user-mode Linux guest
// whose PID 1 is systemd: systemd says the timer is inactive during the B
// block and active after the run; a run killed with SIGKILL during the B
// block leaves it inactive, with a state file, and `memdiag confirm
// --restore` makes it active again. No load and no effect are measured
// here (the guest has no pressure): the experiment's statistics are
// checked on the host (TestConfirmCronLine).
func checkConfirmGuest(t *testing.T, g *testenv.SystemdGuest) {
	read := func(name string) string { return strings.TrimSpace(g.Read(t, name)) }
	if got := read("before"); got != "active" {
		t.Fatalf("pmlogger_check.timer before the run: %q, want active", got)
	}
	during := strings.Fields(read("during"))
	t.Logf("systemd during the run (every 0.3 s): %s", strings.Join(during, " "))
	if !strings.Contains(" "+strings.Join(during, " ")+" ", " inactive ") {
		t.Errorf("systemd never said inactive during the run:\n%s", read("run1.err"))
	}
	if got := read("after-run"); got != "active" {
		t.Errorf("after the run: %q, want active\n%s", got, read("run1.err"))
	}
	// Without PSI in the guest kernel and without a probe there is nothing
	// to compare, and confirm says so after putting the timer back.
	_, noPSI := os.Stat(filepath.Join(g.Out, "psi"))
	if rc := read("run1.rc"); rc != "0" && (noPSI == nil || !strings.Contains(read("run1.err"), "nothing to compare")) {
		t.Errorf("run 1 exited %s:\n%s", rc, read("run1.err"))
	}
	t.Logf("run 1:\n%s\n%s", read("run1.json"), read("run1.err"))
	if got := read("killed"); got != "inactive" {
		t.Errorf("after SIGKILL in the B block: %q, want inactive (the test must kill while it is held)", got)
	}
	if !strings.Contains(read("state.json"), `"unit": "pmlogger_check.timer"`) {
		t.Errorf("state file after SIGKILL:\n%s", read("state.json"))
	}
	if rc := read("restore.rc"); rc != "0" || !strings.Contains(read("restore.out"), "Restored pmlogger_check.timer") {
		t.Errorf("restore exited %s:\n%s", rc, read("restore.out"))
	}
	if got := read("after-restore"); got != "active" {
		t.Errorf("after --restore systemd says %q, want active", got)
	}
}

// checkConfirmGuestFix checks what confirmGuestFixPart wrote in guest g:
// `memdiag confirm --with` a [Service] drop-in puts it, for the B block,
// in /etc/systemd/system/pmlogger_check.service.d/, where systemd loads
// it (DropInPaths) and, after the run, no longer lists it, the folder
// memdiag made gone; a run killed with SIGKILL with the drop-in in place
// leaves it listed, and `memdiag confirm --restore` removes it and
// reloads systemd.
func checkConfirmGuestFix(t *testing.T, g *testenv.SystemdGuest) {
	read := func(name string) string { return strings.TrimSpace(g.Read(t, name)) }
	const ours = "/etc/systemd/system/pmlogger_check.service.d/50-memdiag-confirm.conf"
	if got := read("fix-before"); strings.Contains(got, ours) {
		t.Fatalf("DropInPaths before the run: %q", got)
	}
	during := read("fix-during")
	t.Logf("DropInPaths during the run (every 0.3 s):\n%s", during)
	// Other drop-ins (the distribution's for every service) may be
	// listed beside memdiag's: each answer is searched for it.
	var with, without int
	for _, l := range strings.Split(during, "\n") {
		if strings.Contains(l, ours) {
			with++
		} else {
			without++
		}
	}
	if with == 0 {
		t.Errorf("systemd never listed %s during the run:\n%s", ours, read("fix1.err"))
	}
	if without == 0 {
		t.Errorf("systemd listed memdiag's drop-in all through the run, the A block too")
	}
	if got := read("fix-after-run"); strings.Contains(got, ours) {
		t.Errorf("DropInPaths after the run: %q, want none\n%s", got, read("fix1.err"))
	}
	if got := read("fix-dir"); !strings.Contains(got, "No such file") {
		t.Errorf("pmlogger_check.service.d after the run: %q, want gone (memdiag made it)", got)
	}
	_, noPSI := os.Stat(filepath.Join(g.Out, "psi"))
	if rc := read("fix1.rc"); rc != "0" && (noPSI == nil || !strings.Contains(read("fix1.err"), "nothing to compare")) {
		t.Errorf("run 1 exited %s:\n%s", rc, read("fix1.err"))
	}
	t.Logf("run 1:\n%s\n%s", read("fix1.json"), read("fix1.err"))
	if got := read("fix-killed"); !strings.Contains(got, ours) {
		t.Errorf("DropInPaths after SIGKILL in the B block: %q, want %s (the test must kill while it is in place)", got, ours)
	}
	if rc := read("fix-restore.rc"); rc != "0" || !strings.Contains(read("fix-restore.out"), "Restored pmlogger_check.timer (the fix /run/memdiag-fix.conf in place since") {
		t.Errorf("restore exited %s:\n%s", rc, read("fix-restore.out"))
	}
	if got := read("fix-after-restore"); strings.Contains(got, ours) {
		t.Errorf("DropInPaths after --restore: %q, want none", got)
	}
	if got := read("fix-dir-restore"); !strings.Contains(got, "No such file") {
		t.Errorf("pmlogger_check.service.d after --restore: %q, want gone", got)
	}
}
