package cmd

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// zoneRoot is a root with Debian's fstrim.timer (OnCalendar=weekly) and a
// crontab line at 06:25, whose etc/localtime is Asia/Shanghai's TZif from
// this host's zone database, linked (as timedatectl does) or copied (as
// some images and container builds do).
func zoneRoot(t *testing.T, copied bool) string {
	t.Helper()
	const tzif = "/usr/share/zoneinfo/Asia/Shanghai"
	b, err := os.ReadFile(tzif)
	if err != nil {
		t.Skip("no tzdata:", err)
	}
	root := t.TempDir()
	units := filepath.Join(root, "etc/systemd/system")
	for _, d := range []string{filepath.Join(units, "timers.target.wants"), filepath.Join(root, "lib/systemd/system")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"fstrim.timer", "fstrim.service"} {
		unit, err := os.ReadFile(filepath.Join(timersRoot("debian"), "lib/systemd/system", name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, "lib/systemd/system", name), unit, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("/lib/systemd/system/fstrim.timer", filepath.Join(units, "timers.target.wants/fstrim.timer")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "etc/crontab"), []byte("25 6 * * * root /bin/true\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(root, "usr/sbin"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "usr/sbin/cron"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if copied {
		err = os.WriteFile(filepath.Join(root, "etc/localtime"), b, 0o644)
	} else {
		err = os.Symlink(tzif, filepath.Join(root, "etc/localtime"))
	}
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// TestTimersCopiedLocaltime (issue 30.1): jobs run in the zone of
// etc/localtime whether it is linked or copied; --tz only changes the
// zone times are shown in. systemd-analyze agrees: TZ=Asia/Shanghai
// systemd-analyze calendar --base-time=@1796472000 weekly gives
// Mon 2026-12-07 00:00:00 CST, (in UTC) Sun 2026-12-06 16:00:00 UTC.
func TestTimersCopiedLocaltime(t *testing.T) {
	for _, copied := range []bool{false, true} {
		root := zoneRoot(t, copied)
		for _, tz := range []string{"UTC", "Europe/Berlin", ""} {
			name := map[bool]string{false: "linked", true: "copied"}[copied] + "/tz=" + tz
			t.Run(name, func(t *testing.T) {
				args := []string{"timers", "--base-time", "2026-12-05T12:00:00Z", "--format", "json", "--next", "2"}
				if tz != "" {
					args = append(args, "--tz", tz)
				}
				code, out, errOut := runCLI(t, root, args...)
				if code != 0 {
					t.Fatalf("exit %d; stderr:\n%s", code, errOut)
				}
				var doc struct {
					TimeZone string `json:"time_zone"`
					Jobs     []struct {
						Name     string   `json:"name"`
						TimeZone string   `json:"time_zone"`
						Next     []string `json:"next"`
					} `json:"jobs"`
				}
				if err := json.Unmarshal([]byte(out), &doc); err != nil {
					t.Fatal(err)
				}
				wantZone := tz
				if tz == "" {
					wantZone = "Asia/Shanghai"
				}
				if doc.TimeZone != wantZone {
					t.Errorf("time_zone %q, want %q", doc.TimeZone, wantZone)
				}
				got := map[string][]string{}
				for _, j := range doc.Jobs {
					got[j.Name] = nil
					for _, n := range j.Next {
						got[j.Name] = append(got[j.Name], utcOf(t, n))
					}
					if j.TimeZone != "Asia/Shanghai" {
						t.Errorf("%s: time_zone %q, want Asia/Shanghai", j.Name, j.TimeZone)
					}
				}
				want := map[string][]string{
					// Mondays 00:00 CST.
					"fstrim.timer": {"2026-12-06T16:00:00Z", "2026-12-13T16:00:00Z"},
					// 06:25 CST daily.
					"crontab:1": {"2026-12-05T22:25:00Z", "2026-12-06T22:25:00Z"},
				}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("next firings in UTC (-want +got):\n%s", diff)
				}
			})
		}
	}
}

// TestTimersCopiedLocaltimeWindow: the crontab's 06:25 CST run stays in a
// window viewed in Europe/Berlin (it is 23:25 CET the evening before).
func TestTimersCopiedLocaltimeWindow(t *testing.T) {
	root := zoneRoot(t, true)
	code, out, errOut := runCLI(t, root, "timers", "--tz", "Europe/Berlin", "--from", "2026-12-05 20:00", "--to", "6h")
	if code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, errOut)
	}
	if !strings.Contains(out, "2026-12-05 23:25:00  │ crontab:1 ") {
		t.Errorf("no 23:25 CET (06:25 CST) firing of crontab:1 in:\n%s", out)
	}
}

// TestTimersUnreadableLocaltime: an etc/localtime that is not a zone file
// leaves the zone unknown; timers says so instead of assuming UTC.
func TestTimersUnreadableLocaltime(t *testing.T) {
	root := zoneRoot(t, true)
	if err := os.WriteFile(filepath.Join(root, "etc/localtime"), []byte("not a zone\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runCLI(t, root, "timers", "--tz", "UTC")
	if code == 0 || !strings.Contains(errOut, "zone periodic jobs run in is unknown") || !strings.Contains(errOut, "etc/localtime") {
		t.Errorf("exit %d, stderr %q, stdout:\n%s\nwant an error saying the zone of etc/localtime is unknown", code, errOut, out)
	}
}

func utcOf(t *testing.T, rfc3339 string) string {
	t.Helper()
	ts, err := time.Parse(time.RFC3339, rfc3339)
	if err != nil {
		t.Fatal(err)
	}
	return ts.UTC().Format("2006-01-02T15:04:05Z")
}

// TestRunTimersDuplicates (issue 30.6): sa1 and sa2 run from sysstat's
// timers and from an added cron.d file; the listing's problems say so in
// the table and in JSON. --strict still fails only on malformed files.
func TestRunTimersDuplicates(t *testing.T) {
	base := []string{"timers", "--base-time", "2026-12-05T12:00:00Z", "--tz", "UTC"}
	want := []string{
		"runs twice: sysstat-collect.timer (10m) and cron.d/sysstat-local:3 (5m): sa1 1 1",
		"runs twice: sysstat-summary.timer (1d) and cron.d/sysstat-local:5 (1d): sa2 -A",
	}
	code, out, errOut := runCLI(t, timersRoot("sysstat-twice"), append(base, "--format", "json", "--strict")...)
	if code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, errOut)
	}
	var doc struct {
		Problems []string `json:"problems"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, doc.Problems); diff != "" {
		t.Errorf("JSON problems (-want +got):\n%s", diff)
	}
	_, out, _ = runCLI(t, timersRoot("sysstat-twice"), base...)
	if !strings.Contains(out, "Problems (2):\n  "+want[0]+"\n  "+want[1]+"\n") {
		t.Errorf("table lacks the two problems:\n%s", out)
	}
}

// TestTimersUnnamedCopiedLocaltime: a copied etc/localtime that matches
// no file of the root's zone database (here one holding only UTC) is
// still the zone's rules: jobs run at Shanghai's times, shown in that
// zone under the name "unnamed zone (copied /etc/localtime)".
func TestTimersUnnamedCopiedLocaltime(t *testing.T) {
	root := zoneRoot(t, true)
	utc, err := os.ReadFile("/usr/share/zoneinfo/UTC")
	if err != nil {
		t.Skip("no tzdata:", err)
	}
	if err := os.MkdirAll(filepath.Join(root, "usr/share/zoneinfo"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "usr/share/zoneinfo/UTC"), utc, 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runCLI(t, root, "timers", "--base-time", "2026-12-05T12:00:00Z", "--format", "json")
	if code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, errOut)
	}
	for _, want := range []string{`"time_zone": "unnamed zone (copied /etc/localtime)"`, `"2026-12-07T00:00:00+08:00"`, `"2026-12-06T06:25:00+08:00"`} {
		if !strings.Contains(out, want) {
			t.Errorf("no %s in:\n%s", want, out)
		}
	}
	_, out, _ = runCLI(t, root, "timers", "--base-time", "2026-12-05T12:00:00Z")
	if !strings.Contains(out, "NEXT (localtime)") || !strings.Contains(out, "\nlocaltime: the root's copied /etc/localtime, which matches no named zone\n") {
		t.Errorf("table lacks NEXT (localtime) and the line naming the zone:\n%s", out)
	}
}
