package guest

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/memdiag/memdiag/internal/testenv"
	"github.com/memdiag/memdiag/process"
	"github.com/memdiag/memdiag/record"
)

// pcpTimers are the reference case's two timers, each shortened by a
// drop-in to every 2 minutes (pcp ships *:25:00/*:55:00 and
// *:25:10/*:55:10, plus OnBootSec=1min). calendar is the drop-in's at
// boot; once memdiag watch records, the guest's script moves both to a
// phase just ahead (the check in 20 s, the farm check 15 s after it) and
// reloads systemd, as an admin editing a drop-in would: the test then
// waits seconds for both firings, not up to two periods (docs/ci.md).
var pcpTimers = []struct {
	timer, service, calendar string
	offset                   int // s after the check, in the moved calendar
}{
	{"pmlogger_check.timer", "pmlogger_check.service", "*-*-* *:00/2:00", 0},
	{"pmlogger_farm_check.timer", "pmlogger_farm_check.service", "*-*-* *:00/2:40", 15},
}

// guestScript is run by memdiag-e2e.service in the guest. It waits until
// systemd is up, starts memdiag watch, and once it has recorded a sample
// polls systemd (once a second, up to %[1]d s in all) until both timers
// have triggered since and wait for their next elapse; it stops the
// recording, then records what systemd, the journal and
// memdiag say, and powers the guest off. The state is read twice around
// memdiag timers; if a timer fired in between (the two reads differ),
// the capture is repeated, so memdiag and systemctl see the same state.
const guestScript = `set -u
out=/run/out
cat /proc/1/comm > $out/pid1
readlink /proc/1/exe >> $out/pid1
systemctl is-system-running --wait > $out/is-system-running 2>&1
systemd-analyze > $out/systemd-analyze.txt 2>&1
deadline=$(( $(date +%%s) + %[1]d ))
systemd-analyze blame --no-pager 2>&1 | head -n 8 > $out/systemd-analyze-blame.txt
# LastTriggerUSec and NextElapseUSecRealtime in µs, as PID 1 holds them
# (systemctl show prints them to the second).
props() {
  p=$(busctl call org.freedesktop.systemd1 /org/freedesktop/systemd1 org.freedesktop.systemd1.Manager GetUnit s $1 | cut -d'"' -f2)
  busctl get-property org.freedesktop.systemd1 "$p" org.freedesktop.systemd1.Timer LastTriggerUSec NextElapseUSecRealtime
}
raw() {
  for u in pmlogger_check.timer pmlogger_farm_check.timer; do echo $u $(props $u); done
}
# memdiag watch records while systemd fires the timers; firings count
# from its first sample on (its start takes 10-20 s in the guest).
%[2]s watch --out $out/watch.jsonl --interval 1s --quiet > $out/watch.log 2>&1 &
watch=$!
until [ "$(cat $out/watch.jsonl 2>/dev/null | wc -l)" -ge 2 ]; do
  if [ "$(date +%%s)" -ge "$deadline" ] || ! kill -0 $watch; then echo "memdiag watch wrote no sample" > $out/timeout; break; fi
  sleep 1
done
# Move each timer's calendar to a phase just ahead, every 2 minutes still
# (minute parity and second of the moment it should fire at), and reload.
at=$(( $(date +%%s) + 20 ))
: > $out/calendars
: > $out/targets
set -- %[4]s
while [ $# -ge 2 ]; do
  s=$(( at + $2 ))
  c="*-*-* *:0$(( $(date -d @$s +%%-M) %% 2 ))/2:$(date -d @$s +%%S)"
  printf '[Timer]\nOnCalendar=\nOnCalendar=%%s\nAccuracySec=1s\n' "$c" > /etc/systemd/system/$1.d/memdiag-e2e.conf
  echo "$1 $c" >> $out/calendars
  echo "$1 $s" >> $out/targets
  shift 2
done
systemctl daemon-reload
# Fired on its moved calendar (at or after the second it was moved to),
# and waiting again: while its service runs, a timer has no next
# elapse. Not merely since the recording began: a timer that never
# fired before may fire at once after the reload (a missed OnBootSec=;
# seen 2026-12-07: the farm check at the reload, 29 s before its moved
# time), and watch must still see the firing the test compares with
# systemd's last trigger.
fired() {
  s=$(awk -v u="$1" '$1 == u { print $2 }' $out/targets)
  set -- "$1" $(props "$1")
  [ "$3" -ge $(( (s - 1) * 1000000 )) ] && [ "$(systemctl show -P SubState "$1")" = waiting ]
}
until fired pmlogger_check.timer && fired pmlogger_farm_check.timer; do
  if [ "$(date +%%s)" -ge "$deadline" ]; then echo "no firing of both timers within %[1]d s" >> $out/timeout; break; fi
  sleep 1
done
kill -TERM $watch
wait $watch
echo $? > $out/watch.rc
show() {
  raw
  echo
  systemctl show --timestamp=us+utc -p Id,LastTriggerUSec,LastTriggerUSecMonotonic,NextElapseUSecRealtime,TimersCalendar,AccuracyUSec,Unit pmlogger_check.timer pmlogger_farm_check.timer
  systemctl show --timestamp=us+utc -p Id,TriggeredBy,ExecMainStartTimestamp,Result pmlogger_check.service pmlogger_farm_check.service
}
for try in 1 2 3; do
  show > $out/show-before.txt
  systemctl list-timers --all --no-pager > $out/list-timers.txt
  t0=$(date +%%s.%%N)
  %[2]s timers --format json > $out/memdiag-timers.json 2> $out/memdiag-timers.err
  echo $? > $out/memdiag-timers.rc
  echo "$t0 $(date +%%s.%%N)" > $out/memdiag-timers.time
  %[2]s timers > $out/memdiag-timers.txt 2>&1
  show > $out/show.txt
  cmp -s $out/show-before.txt $out/show.txt && break
done
journalctl -o json --no-pager _PID=1 > $out/journal-pid1.json
journalctl -o short-iso-precise --no-pager -u pmlogger_check.timer -u pmlogger_check.service -u pmlogger_farm_check.timer -u pmlogger_farm_check.service > $out/journal-pcp.txt
%[3]s
echo done > $out/done
sync
echo o > /proc/sysrq-trigger
`

// TestSystemdGuestFiresPCPTimers boots a user-mode Linux guest whose PID
// 1 is systemd, with Debian's pcp as installed on the host (its units and
// the enable link its postinst made for pmlogger.service) and the two
// pmlogger check timers shortened by drop-ins, and checks from systemd
// itself that both timers fired on their own: their LastTriggerUSec, the
// start jobs PID 1 logged for their services, TriggeredBy=, and that the
// next elapse systemd computed lies on the drop-in's calendar. memdiag
// timers runs in the guest and must give, for both timers, systemd's
// LAST and, as its own projection from the unit files, systemd's NEXT.
func TestSystemdGuestFiresPCPTimers(t *testing.T) {
	testenv.RequireRoot(t, "a user-mode Linux guest booting the host's systemd over a read-only view of its root")
	// Its own guest and assertions on it only, the guest at the lowest CPU
	// and I/O priority (nice 19, ionice idle): beside every other e2e test (testenv.Aside), from
	// the suite's start, instead of after them on its critical path.
	testenv.Aside(t)
	const pollFor = 420 // s after the boot: watch's start and two periods, with room
	// Then memdiag confirm on pmlogger_check.timer (confirmGuestPart,
	// with --with's part: two runs more and four daemon-reloads, a minute
	// or two on a loaded host, hence 15 minutes, not 13): one boot for
	// all, each guest boot being minutes of CI.
	g, memdiag, ran := bootPCPGuest(t, "wait for pcp's timers, record what systemd says, memdiag confirm, power off", "basic.target",
		fmt.Sprintf(guestScript, pollFor, "/usr/local/bin/memdiag-e2e", confirmGuestPart, timerOffsets()), 15*time.Minute, func(g *testenv.SystemdGuest) {
			for _, pt := range pcpTimers {
				// An empty OnCalendar= resets every trigger of the unit,
				// pcp's OnBootSec=1min included, so each firing is a calendar one.
				// AccuracySec=1s: systemd starts the service within a second of
				// the calendar time instead of coalescing wake-ups over a minute.
				g.WriteFile(t, "/etc/systemd/system/"+pt.timer+".d/memdiag-e2e.conf",
					"[Timer]\nOnCalendar=\nOnCalendar="+pt.calendar+"\nAccuracySec=1s\n", 0o644)
			}
		})
	t.Logf("guest booted, waited for both timers and halted in %s", ran.Round(time.Second))
	if keep := os.Getenv("MEMDIAG_E2E_KEEP"); keep != "" {
		// The guest's output (recording, journal, systemctl's answers) for a look afterwards.
		if err := os.CopyFS(filepath.Join(keep, t.Name()), os.DirFS(g.Out)); err != nil {
			t.Logf("MEMDIAG_E2E_KEEP: %v", err)
		}
	}
	read := func(name string) string { return strings.TrimSpace(g.Read(t, name)) }
	if _, err := os.Stat(filepath.Join(g.Out, "done")); err != nil {
		t.Fatalf("the guest's test unit did not finish: %v\n%s", err, g.Log())
	}
	if b, err := os.ReadFile(filepath.Join(g.Out, "timeout")); err == nil {
		t.Fatalf("%s\nlist-timers:\n%s\n%s", b, read("list-timers.txt"), read("journal-pcp.txt"))
	}
	if comm, exe, _ := strings.Cut(read("pid1"), "\n"); comm != "systemd" || filepath.Base(exe) != "systemd" {
		t.Fatalf("PID 1 of the guest: %q (%s), want systemd", comm, exe)
	}
	t.Run("confirm", func(t *testing.T) { checkConfirmGuest(t, g) })
	t.Run("confirm --with", func(t *testing.T) { checkConfirmGuestFix(t, g) })
	t.Logf("is-system-running: %s; %s\nslowest units:\n%s", read("is-system-running"), read("systemd-analyze.txt"), read("systemd-analyze-blame.txt"))
	t.Logf("systemctl list-timers --all in the guest:\n%s", read("list-timers.txt"))

	rawShow, textShow, _ := strings.Cut(read("show.txt"), "\n\n")
	show := parseShow(t, textShow)
	raw := parseRaw(t, rawShow)
	starts := pid1Starts(t, filepath.Join(g.Out, "journal-pid1.json"))
	var mj struct {
		Jobs []struct {
			Name        string      `json:"name"`
			LastTrigger *time.Time  `json:"last_trigger"`
			NextElapse  *time.Time  `json:"next_elapse"`
			Next        []time.Time `json:"next"`
			Active      bool        `json:"active"`
			IdleNow     bool        `json:"idle_now"`
		} `json:"jobs"`
	}
	if rc := read("memdiag-timers.rc"); rc != "0" {
		t.Fatalf("memdiag timers in the guest exited %s: %s", rc, read("memdiag-timers.err"))
	}
	if err := json.Unmarshal([]byte(read("memdiag-timers.json")), &mj); err != nil {
		t.Fatalf("memdiag timers --format json: %v", err)
	}
	if f := strings.Fields(read("memdiag-timers.time")); len(f) == 2 {
		t0, _ := strconv.ParseFloat(f[0], 64)
		t1, _ := strconv.ParseFloat(f[1], 64)
		t.Logf("memdiag timers --format json took %.1f s in the guest", t1-t0)
	}
	t.Logf("memdiag timers in the guest:\n%s", read("memdiag-timers.txt"))

	calendars := movedCalendars(t, read("calendars"))
	for _, pt := range pcpTimers {
		cal, ok := calendars[pt.timer]
		if !ok {
			t.Fatalf("the guest did not move %s's calendar:\n%s", pt.timer, read("calendars"))
		}
		tp, sp := show[pt.timer], show[pt.service]
		if tp == nil || sp == nil {
			t.Fatalf("systemctl show has no %s or %s:\n%s", pt.timer, pt.service, read("show.txt"))
		}
		if want := "{ OnCalendar=" + cal.spec + " ;"; !strings.HasPrefix(tp["TimersCalendar"], want) {
			t.Errorf("%s TimersCalendar=%q, want the drop-in's %q only", pt.timer, tp["TimersCalendar"], want)
		}
		last, next := raw[pt.timer][0], raw[pt.timer][1]
		if last.IsZero() || next.IsZero() {
			t.Fatalf("%s: LastTriggerUSec %s, NextElapseUSecRealtime %s; want both set", pt.timer, last, next)
		}
		// systemctl show's text agrees with the µs values, to the second.
		for k, v := range map[string]time.Time{"LastTriggerUSec": last, "NextElapseUSecRealtime": next} {
			if got := usTime(t, pt.timer+" "+k, tp[k]); !got.Equal(v.Truncate(time.Second)) {
				t.Errorf("%s: systemctl show %s=%s, D-Bus says %s", pt.timer, k, tp[k], v)
			}
		}
		// systemd's own next elapse lies on the drop-in's calendar
		// (local time: the guest's zone is the host's).
		if l := next.Local(); l.Second() != cal.second || l.Minute()%2 != cal.parity || next.Nanosecond() != 0 || !next.After(last) {
			t.Errorf("%s: systemd's next elapse %s is not on %s after the last trigger %s", pt.timer, next, cal.spec, last)
		}
		if got := sp["TriggeredBy"]; got != pt.timer {
			t.Errorf("%s TriggeredBy=%q, want %s", pt.service, got, pt.timer)
		}
		// PID 1 logged a start job of the service at or after the trigger.
		var after []time.Time
		for _, s := range starts[pt.service] {
			if !s.Before(last) {
				after = append(after, s)
			}
		}
		if len(after) == 0 {
			t.Errorf("%s triggered at %s, but PID 1 logged no start of %s then or after (starts: %v)", pt.timer, last, pt.service, starts[pt.service])
		} else {
			t.Logf("%s: systemd triggered it at %s (%.3f s after %s), started %s %.3f s later",
				pt.timer, last.Format(time.RFC3339Nano), last.Sub(last.Truncate(time.Minute)).Seconds()-float64(cal.second),
				cal.spec, pt.service, after[0].Sub(last).Seconds())
		}

		// memdiag timers: systemd's LAST read over D-Bus; NEXT projected
		// from the unit files (drop-ins included) equals systemd's.
		found := false
		for _, j := range mj.Jobs {
			if j.Name != pt.timer {
				continue
			}
			found = true
			if j.LastTrigger == nil || !j.LastTrigger.Equal(last) {
				t.Errorf("memdiag timers: %s last_trigger %v, systemd's LastTriggerUSec %s", pt.timer, j.LastTrigger, last)
			}
			if j.NextElapse == nil || !j.NextElapse.Equal(next) {
				t.Errorf("memdiag timers: %s next_elapse %v, systemd's NextElapseUSecRealtime %s", pt.timer, j.NextElapse, next)
			}
			if len(j.Next) == 0 || !j.Next[0].Equal(next) {
				t.Errorf("memdiag timers: %s projects next %v, systemd's NextElapseUSecRealtime %s", pt.timer, j.Next, next)
			}
			if !j.Active || j.IdleNow {
				t.Errorf("memdiag timers: %s active=%v idle_now=%v, want active and firing now", pt.timer, j.Active, j.IdleNow)
			}
		}
		if !found {
			t.Errorf("memdiag timers does not list %s", pt.timer)
		}
	}
	checkWatch(t, g, show, raw)
	// What analyze says of the guest's recording, for the record: the
	// guest has no memory pressure, so no episode and no culprit are
	// expected, and none is asserted.
	out, err := exec.Command(memdiag, "analyze", filepath.Join(g.Out, "watch.jsonl")).CombinedOutput()
	t.Logf("memdiag analyze of the guest's recording (%v):\n%s", err, out)
	if t.Failed() {
		t.Logf("systemctl show:\n%s\njournal:\n%s", read("show.txt"), read("journal-pcp.txt"))
	}
}

// timerOffsets is the guest script's list of timers to move and their
// offsets in seconds: "pmlogger_check.timer 0 pmlogger_farm_check.timer 15".
func timerOffsets() string {
	var f []string
	for _, pt := range pcpTimers {
		f = append(f, pt.timer, strconv.Itoa(pt.offset))
	}
	return strings.Join(f, " ")
}

// movedCalendar is a calendar the guest's script gave a timer:
// "*-*-* *:0P/2:SS", every 2 minutes from minute parity P at second SS.
type movedCalendar struct {
	spec           string
	parity, second int
}

// movedCalendars reads the guest's calendars file ("TIMER SPEC" lines).
func movedCalendars(t *testing.T, s string) map[string]movedCalendar {
	t.Helper()
	m := map[string]movedCalendar{}
	for line := range strings.SplitSeq(s, "\n") {
		timer, spec, _ := strings.Cut(line, " ")
		var c movedCalendar
		if _, err := fmt.Sscanf(spec, "*-*-* *:0%d/2:%d", &c.parity, &c.second); err != nil || c.parity > 1 || c.second > 59 {
			t.Fatalf("calendars: line %q: want TIMER *-*-* *:0P/2:SS (%v)", line, err)
		}
		c.spec = spec
		m[timer] = c
	}
	return m
}

// checkWatch checks the recording memdiag watch made in the guest while
// systemd fired the timers: for each timer, a process of its service
// started (an exec event with the service's unit, read from the
// process's cgroup) at or after systemd's LastTriggerUSec. How far
// memdiag's time is from systemd's start of the service is logged.
func checkWatch(t *testing.T, g *testenv.SystemdGuest, show map[string]map[string]string, raw map[string][2]time.Time) {
	t.Helper()
	if rc := strings.TrimSpace(g.Read(t, "watch.rc")); rc != "0" {
		t.Errorf("memdiag watch in the guest exited %s:\n%s", rc, g.Read(t, "watch.log"))
		return
	}
	r, err := record.ReadFile(filepath.Join(g.Out, "watch.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Samples) == 0 {
		t.Fatalf("memdiag watch in the guest recorded no sample:\n%s", g.Read(t, "watch.log"))
	}
	first := func(unit string, since time.Time) (record.Event, bool) {
		for _, s := range r.Samples {
			for _, e := range s.Events {
				if e.Kind == process.Exec && e.Unit == unit && !e.Time.Before(since) {
					return e, true
				}
			}
		}
		return record.Event{}, false
	}
	for _, pt := range pcpTimers {
		last := raw[pt.timer][0]
		if !r.Samples[0].Time.Before(last) {
			t.Errorf("memdiag watch's first sample %s is not before systemd's trigger of %s at %s", r.Samples[0].Time, pt.timer, last)
		}
		e, ok := first(pt.service, last)
		if !ok {
			t.Errorf("memdiag watch recorded no process of %s started at or after systemd's trigger %s (%d samples, %s to %s)",
				pt.service, last.Format(time.RFC3339Nano), len(r.Samples), r.Header.Start.Format(time.RFC3339), r.Samples[len(r.Samples)-1].Time.Format(time.RFC3339))
			continue
		}
		started := usTime(t, pt.service+" ExecMainStartTimestamp", show[pt.service]["ExecMainStartTimestamp"])
		t.Logf("memdiag watch: %s (PID %d, %s) started at %s, %.3f s after systemd triggered %s and %.3f s after systemd started the service (ExecMainStartTimestamp)",
			e.Comm, e.PID, e.Source, e.Time.Format(time.RFC3339Nano), e.Time.Sub(last).Seconds(), pt.timer, e.Time.Sub(started).Seconds())
	}
}

// parseShow reads `systemctl show` output for several units (blocks
// separated by a blank line) into unit → property → value.
func parseShow(t *testing.T, s string) map[string]map[string]string {
	t.Helper()
	units := map[string]map[string]string{}
	var cur map[string]string
	for line := range strings.SplitSeq(s+"\n", "\n") {
		if line == "" {
			cur = nil
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			t.Fatalf("systemctl show: line %q", line)
		}
		if cur == nil {
			cur = map[string]string{}
		}
		cur[k] = v
		if k == "Id" {
			units[v] = cur
		}
	}
	return units
}

// parseRaw reads lines "UNIT t LAST t NEXT" (busctl get-property of
// LastTriggerUSec and NextElapseUSecRealtime, µs since the epoch; 0 is
// never or none) into unit → [last, next].
func parseRaw(t *testing.T, s string) map[string][2]time.Time {
	t.Helper()
	m := map[string][2]time.Time{}
	for line := range strings.SplitSeq(s, "\n") {
		f := strings.Fields(line)
		if len(f) != 5 || f[1] != "t" || f[3] != "t" {
			t.Fatalf("busctl get-property: line %q", line)
		}
		var v [2]time.Time
		for i, us := range []string{f[2], f[4]} {
			n, err := strconv.ParseInt(us, 10, 64)
			if err != nil {
				t.Fatalf("busctl get-property: line %q: %v", line, err)
			}
			if n != 0 {
				v[i] = time.UnixMicro(n).UTC()
			}
		}
		m[f[0]] = v
	}
	return m
}

// usTime parses a timestamp systemctl prints with --timestamp=us+utc
// ("Sun 2026-12-06 08:02:00.000412 UTC").
func usTime(t *testing.T, what, v string) time.Time {
	t.Helper()
	ts, err := time.Parse("Mon 2006-01-02 15:04:05.999999 MST", v)
	if err != nil {
		t.Fatalf("%s=%q: %v", what, v, err)
	}
	return ts.UTC()
}

// pid1Starts reads `journalctl -o json _PID=1` and returns, per unit, the
// times PID 1 logged a finished start job for it (JOB_TYPE=start,
// JOB_RESULT=done: "Started …").
func pid1Starts(t *testing.T, path string) map[string][]time.Time {
	t.Helper()
	return testenv.PID1Journal(t, path, func(e map[string]any) bool { return e["JOB_TYPE"] == "start" && e["JOB_RESULT"] == "done" })
}

// bootPCPGuest boots a user-mode Linux guest whose PID 1 is systemd, with
// Debian's pcp as installed on the host (unmet when it is not: pcp's
// postinst enables pmlogger.service, and the timers come with it through
// its BindsTo=, as on a real host) and memdiag at
// /usr/local/bin/memdiag-e2e. The guest boots memdiag-e2e.target: the
// basic system and pmlogger.service (what multi-user.target pulls
// through pcp's enable link), without the rest of the host's
// multi-user.target (databases, exporters, getty), and
// memdiag-e2e.service (described as what, after after), which runs
// script and powers the guest off. seed writes the test's other files
// before the boot. It returns the halted guest, the memdiag binary built
// for it (the host can run it too) and how long the guest ran.
func bootPCPGuest(t *testing.T, what, after, script string, within time.Duration, seed func(*testenv.SystemdGuest)) (*testenv.SystemdGuest, string, time.Duration) {
	t.Helper()
	link := "/etc/systemd/system/multi-user.target.wants/pmlogger.service"
	if _, err := os.Stat(link); err != nil {
		testenv.Unmet(t, fmt.Sprintf("pcp is not installed and enabled (%v): .ci/timers-setup.sh installs it", err))
	}
	memdiag := testenv.BuildMemdiag(t) // before the UML lock NewSystemdGuest takes
	g := testenv.NewSystemdGuest(t)
	g.Install(t, memdiag, "/usr/local/bin/memdiag-e2e")
	if seed != nil {
		seed(g)
	}
	g.WriteFile(t, "/etc/systemd/system/memdiag-e2e.target", `[Unit]
Description=memdiag e2e guest: basic system, pcp's pmlogger, the test
Requires=basic.target
After=basic.target
Wants=pmlogger.service memdiag-e2e.service
AllowIsolate=yes
`, 0o644)
	g.WriteFile(t, "/etc/systemd/system/memdiag-e2e.service", `[Unit]
Description=memdiag e2e: `+what+`
After=`+after+`
[Service]
Type=exec
ExecStart=/bin/sh /etc/memdiag-e2e/run.sh
StandardOutput=file:/run/out/run.log
StandardError=inherit
`, 0o644)
	g.WriteFile(t, "/etc/memdiag-e2e/run.sh", script, 0o755)
	began := time.Now()
	if err := g.Boot(t, "memdiag-e2e.target", within); err != nil {
		t.Fatalf("%v\n%s", err, g.Log())
	}
	return g, memdiag, time.Since(began)
}
