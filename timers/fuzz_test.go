package timers

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// seedFiles adds the files under ../testdata/timers/debian matching glob
// (relative to the fixture root) to f.
func seedFiles(f *testing.F, globs ...string) {
	f.Helper()
	for _, g := range globs {
		ms, err := filepath.Glob(filepath.Join("../testdata/timers/debian", g))
		if err != nil {
			f.Fatal(err)
		}
		for _, m := range ms {
			b, err := os.ReadFile(m)
			if err != nil {
				continue // a link into a part of the root the fixture leaves out
			}
			f.Add(string(b))
		}
	}
}

// FuzzParseCrontab checks that no crontab, system or user, panics the
// parser, and that every line that parses gives a spec parseCron accepts.
func FuzzParseCrontab(f *testing.F) {
	seedFiles(f, "etc/crontab", "etc/cron.d/*")
	f.Add("*/5 * * * * root run-parts /etc/cron.hourly\n@reboot root x\n")
	f.Add("0\u00a0* * * * root\u00a0x\n")
	f.Add("* * * * *\vroot\fx\r\n")
	f.Fuzz(func(t *testing.T, text string) {
		lines := strings.Split(text, "\n")
		for _, system := range []bool{true, false} {
			for _, cl := range parseCrontab("etc/crontab", lines, system, "alice") {
				if cl.Err != "" {
					continue
				}
				if _, err := parseCron(cl.Spec); err != nil {
					t.Fatalf("line %d: spec %q has no error but parseCron says %v", cl.Line, cl.Spec, err)
				}
				if cl.Command == "" && system {
					t.Fatalf("line %d: no command and no error: %+v", cl.Line, cl)
				}
			}
		}
	})
}

// FuzzParseCron checks that a time spec never panics and that Next moves
// forward.
func FuzzParseCron(f *testing.F) {
	for _, s := range []string{"*/10 * * * *", "30 7 1-7 * mon", "0 0 * * 5-7", "1-7/2 * * * 7", "@daily", "@reboot", "0 0 31 2 *"} {
		f.Add(s)
	}
	base := time.Date(2026, 3, 29, 0, 58, 30, 0, time.UTC)
	f.Fuzz(func(t *testing.T, spec string) {
		c, err := parseCron(spec)
		if err != nil {
			return
		}
		if n := c.Next(base, time.UTC); !n.IsZero() && !n.After(base) {
			t.Fatalf("%q: Next(%s) = %s, not after", spec, base, n)
		}
	})
}

// FuzzParseAnacrontab checks that no anacrontab panics the parser and
// that no job id that could leave /var/spool/anacron is accepted.
func FuzzParseAnacrontab(f *testing.F) {
	seedFiles(f, "etc/anacrontab")
	f.Add("START_HOURS_RANGE=3-22\nRANDOM_DELAY=45\n1\t5\tcron.daily\trun-parts --report /etc/cron.daily\n")
	f.Add("1 5 ../../dev/zero cat\n")
	root := f.TempDir()
	f.Fuzz(func(t *testing.T, text string) {
		for _, j := range parseAnacrontab(root, "etc/anacrontab", strings.Split(text, "\n"), anacronTrigger{Schedules: []string{"cron:30 7 * * *"}}, false) {
			if len(j.Errors) > 0 {
				continue
			}
			id := strings.TrimPrefix(j.Name, "anacron:")
			if !validAnacronID(id) {
				t.Fatalf("job id %q accepted", id)
			}
		}
	})
}

// FuzzParseUnit checks that no unit file or drop-in panics the parser
// and that every error names the file.
func FuzzParseUnit(f *testing.F) {
	seedFiles(f, "usr/lib/systemd/system/*.timer", "lib/systemd/system/*.timer", "etc/systemd/system/*/*.timer")
	f.Add("[Timer]\nOnCalendar=\nOnCalendar=daily\n[Unit]\nDescription=x \\\n continued\n")
	f.Fuzz(func(t *testing.T, text string) {
		_, errs := parseUnit("x.timer", []byte(text))
		for _, e := range errs {
			if !strings.HasPrefix(e, "x.timer") {
				t.Fatalf("error does not name the file: %q", e)
			}
		}
	})
}

// FuzzParseTimespan checks that a systemd time span never panics and is
// never negative.
func FuzzParseTimespan(f *testing.F) {
	for _, s := range []string{"5min", "1h 30m", "2weeks", "1y", "0", "infinity", "9223372036854775807us", "1.5s"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := parseTimespan(s, time.Second)
		if err == nil && d < 0 {
			t.Fatalf("parseTimespan(%q) = %v, negative", s, d)
		}
	})
}
