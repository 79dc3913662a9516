package timers

import (
	"fmt"
	"math/rand/v2"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memdiag/memdiag/internal/testenv"
)

// TestMktimeMatchesGlibc feeds the same sequence of struct tm values to
// glibc's mktime (testdata/calendar/mktime_probe.c, compiled here) and to
// mktimeState, around the 2026 DST changes of zones with 1 h, 30 min and
// half-hour-offset rules, with out-of-range fields and tm_isdst -1, 0 and
// 1. Both keep their remembered offset from call to call, so this also
// checks which instant a repeated local time resolves to.
func TestMktimeMatchesGlibc(t *testing.T) {
	cc, err := exec.LookPath("cc")
	if err != nil {
		testenv.Unmet(t, "no C compiler to build the glibc probe (Debian packages gcc, libc6-dev): "+err.Error())
	}
	probe := filepath.Join(t.TempDir(), "mktime_probe")
	if out, err := exec.Command(cc, "-O1", "-o", probe, filepath.Join("testdata", "calendar", "mktime_probe.c")).CombinedOutput(); err != nil {
		t.Fatalf("building the probe: %v\n%s", err, out)
	}
	bases := []tm{
		{2026, 2, 29, 2, 0, 0, -1}, {2026, 9, 25, 2, 0, 0, -1}, // Europe
		{2026, 2, 8, 2, 0, 0, -1}, {2026, 10, 1, 1, 0, 0, -1}, // North America
		{2026, 3, 5, 2, 0, 0, -1}, {2026, 9, 4, 2, 0, 0, -1}, // Lord Howe
		{2026, 6, 15, 12, 0, 0, -1}, {2026, 0, 15, 12, 0, 0, -1},
	}
	for _, zone := range []string{"Europe/Berlin", "America/New_York", "Australia/Lord_Howe", "America/St_Johns", "UTC"} {
		loc, err := time.LoadLocation(zone)
		if err != nil {
			t.Fatal(err)
		}
		r := rand.New(rand.NewPCG(1, 2))
		var in strings.Builder
		var tms []tm
		for range 20000 {
			x := bases[r.IntN(len(bases))]
			x.mday += r.IntN(3) - 1
			x.hour += r.IntN(5) - 2
			x.min += r.IntN(70) - 5
			x.sec += r.IntN(62)
			x.isdst = r.IntN(3) - 1
			if zone == "UTC" && x.isdst == 1 {
				// glibc invents a DST offset for a zone without DST;
				// systemd never asks (its isdst 1 comes from a time
				// that was in DST), and mktimeState uses timegm there.
				x.isdst = 0
			}
			if r.IntN(10) == 0 { // end-of-month form: day 0, -1, … of the next month
				x.mday = 1 - r.IntN(4)
				x.mon++
			}
			tms = append(tms, x)
			fmt.Fprintf(&in, "%d %d %d %d %d %d %d\n", x.year, x.mon+1, x.mday, x.hour, x.min, x.sec, x.isdst)
		}
		cmd := exec.Command(probe)
		cmd.Env = []string{"TZ=" + zone}
		cmd.Stdin = strings.NewReader(in.String())
		out, err := cmd.Output()
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		if len(lines) != len(tms) {
			t.Fatalf("%s: %d lines from the probe for %d inputs", zone, len(lines), len(tms))
		}
		m := &mktimeState{loc: loc, utc: zone == "UTC"}
		bad := 0
		for i, x := range tms {
			n, secs, ok := m.mktime(x)
			got := "fail"
			if ok {
				got = fmt.Sprintf("%d %d %d %d %d %d %d %d", secs, n.year, n.mon+1, n.mday, n.hour, n.min, n.sec, n.isdst)
			}
			if got != lines[i] {
				if bad++; bad <= 5 {
					t.Errorf("%s, call %d, mktime(%+v): glibc %q, ours %q", zone, i, x, lines[i], got)
				}
			}
		}
		if bad > 0 {
			t.Errorf("%s: %d of %d calls differ", zone, bad, len(tms))
		}
	}
}
