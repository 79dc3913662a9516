package timers

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestParseCalendarErrors(t *testing.T) {
	tests := []struct{ expr, want string }{
		{"", `invalid calendar expression "": empty expression`},
		{"Fri..Mon", `invalid calendar expression "Fri..Mon": weekday range Fri..Mon runs backwards`},
		{"Mon..", `invalid calendar expression "Mon..": weekday range from Mon has no end`},
		{"Mon.Tue", `invalid calendar expression "Mon.Tue": single "." after a weekday; a range is "Mon..Fri"`},
		{"Mon..Tue..Wed", `invalid calendar expression "Mon..Tue..Wed": weekday range has more than two ends`},
		{"Mondays", `invalid calendar expression "Mondays": unexpected "s" after weekday "Monday"`},
		{"25:00", `invalid calendar expression "25:00": hour 25 out of range 0..23`},
		{"*:60", `invalid calendar expression "*:60": minute 60 out of range 0..59`},
		{"*:*:60", `invalid calendar expression "*:*:60": second 60 out of range 0..59.999999`},
		{"*-13-01", `invalid calendar expression "*-13-01": month 13 out of range 1..12`},
		{"*-*-32", `invalid calendar expression "*-*-32": day 32 out of range 1..31`},
		{"1969-01-01", `invalid calendar expression "1969-01-01": year 1969 out of range 1970..2199`},
		{"*:40..20", `invalid calendar expression "*:40..20": minute range 40..20 runs backwards`},
		{"*:0/0", `invalid calendar expression "*:0/0": minute repetition is 0`},
		{"*:0/60", `invalid calendar expression "*:0/60": minute repetition /60 is longer than the range 0..59`},
		{"*:50/10", `invalid calendar expression "*:50/10": minute 50/10 never repeats within 0..59`},
		{"*:*:1..1.5", `invalid calendar expression "*:*:1..1.5": second range 1..1.500000 is shorter than its 1 s step`},
		{"*-*-* 12:00:00.", `invalid calendar expression "*-*-* 12:00:00.": second: no digits after "."`},
		{"*-*~29", `invalid calendar expression "*-*~29": day ~29 is more than 28 days from the end of the month`},
		{"*-*~4,27", `invalid calendar expression "*-*~4,27": day ~27 is too far from the end of the month: systemd allows at most ~25 as element 2 of a "~" list`},
		{"*-*~05/5", `invalid calendar expression "*-*~05/5": day ~5/5 never repeats within the month`},
		{"2026-01-01-01", `invalid calendar expression "2026-01-01-01": unexpected "-01" after the date`},
		{"*/2:00", `invalid calendar expression "*/2:00": unexpected "/" in date`},
		{"12", `invalid calendar expression "12": expected ":" after the hour at "12"`},
		{"12:", `invalid calendar expression "12:": missing minute`},
		{"*-*-* 12:00:00:00", `invalid calendar expression "*-*-* 12:00:00:00": unexpected ":00" after the time`},
		{"10:00 +0100", `invalid calendar expression "10:00 +0100": unexpected " +0100" after the minute`},
		{"12:00:00 Europe/Berlim", `invalid calendar expression "12:00:00 Europe/Berlim": unknown time zone "Europe/Berlim"`},
		{"daily daily", `invalid calendar expression "daily daily": expected a number for the year or month at "daily daily"`},
		{"@abc", `invalid calendar expression "@abc": expected seconds since the epoch after "@" at "abc"`},
		{"@-5", `invalid calendar expression "@-5": timestamp @-5 out of range 1970..2199`},
	}
	for _, tt := range tests {
		t.Run(tt.expr, func(t *testing.T) {
			c, err := parseCalendar(tt.expr)
			if err == nil {
				t.Fatalf("parseCalendar(%q) = %q, want error %q", tt.expr, c, tt.want)
			}
			if !errors.Is(err, ErrCalendar) {
				t.Errorf("error %v does not wrap ErrCalendar", err)
			}
			if diff := cmp.Diff(tt.want, err.Error()); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCalendarPeriod(t *testing.T) {
	tests := []struct {
		expr    string
		period  time.Duration
		regular bool
	}{
		{"*:00/10", 10 * time.Minute, true},              // sysstat-collect.timer
		{"*-*-* *:25:00", time.Hour, true},               // one line of pmlogger_check.timer
		{"*-*-* 6,18:00", 12 * time.Hour, true},          // apt-daily.timer
		{"daily", 24 * time.Hour, true},                  // logrotate.timer
		{"weekly", 7 * 24 * time.Hour, true},             // fstrim.timer
		{"Sun *-*-* 03:10:00", 7 * 24 * time.Hour, true}, // e2scrub_all.timer
		{"Mon *-*-* 02:00", 7 * 24 * time.Hour, true},
		{"minutely", time.Minute, true},
		{"*:0/30", 30 * time.Minute, true},
		{"*:5/15", 15 * time.Minute, true},
		{"0/6:00", 6 * time.Hour, true},
		{"*:*:*", time.Second, true},
		{"*:*:0/15", 15 * time.Second, true},
		{"*:*:00/0.25", 250 * time.Millisecond, true},
		{"2026-*-* 03:00", 24 * time.Hour, true}, // a year list only bounds the schedule
		{"*:0/25", 10 * time.Minute, false},      // :00 :25 :50, then 10 min
		{"*-*-* 6,20:00", 10 * time.Hour, false}, // 14 h, then 10 h
		{"8..18:00", time.Hour, false},           // hourly by day, not at night
		{"Mon..Fri 08:00", 24 * time.Hour, false},
		{"Mon,Wed,Fri 08:00", 48 * time.Hour, false},
		{"*:0,30:0,30", 30 * time.Second, false},
		{"*-*-01 00:00", 0, false},
		{"monthly", 0, false},
		{"quarterly", 0, false},
		{"*-*~01", 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.expr, func(t *testing.T) {
			c, err := parseCalendar(tt.expr)
			if err != nil {
				t.Fatal(err)
			}
			p, r := calendarPeriod(c)
			if p != tt.period || r != tt.regular {
				t.Errorf("calendarPeriod(%q) = %v, %v; want %v, %v", tt.expr, p, r, tt.period, tt.regular)
			}
		})
	}
}

func TestCombinedCalendarPeriod(t *testing.T) {
	tests := []struct {
		exprs   []string
		period  time.Duration
		regular bool
	}{
		// pmlogger_check.timer and pmie_check.timer: hourly each, 30 min together.
		{[]string{"*-*-* *:25:00", "*-*-* *:55:00"}, 30 * time.Minute, true},
		{[]string{"*-*-* *:28:00", "*-*-* *:58:00"}, 30 * time.Minute, true},
		{[]string{"*:0/20", "*:10/20"}, 10 * time.Minute, true},
		{[]string{"daily", "*-*-* 12:00"}, 12 * time.Hour, true},
		{[]string{"*:00/10"}, 10 * time.Minute, true},
		{[]string{"*:00/10", "*:00/10"}, 10 * time.Minute, true},
		{[]string{"*-*-* *:25:00", "*-*-* *:50:00"}, 25 * time.Minute, false},
		{[]string{"Mon 10:00", "Thu 10:00"}, 3 * 24 * time.Hour, false},
		{[]string{"hourly", "monthly"}, time.Hour, false},
	}
	for _, tt := range tests {
		var cs []*calendarSpec
		for _, e := range tt.exprs {
			c, err := parseCalendar(e)
			if err != nil {
				t.Fatal(err)
			}
			cs = append(cs, c)
		}
		p, r := combinedCalendarPeriod(cs...)
		if p != tt.period || r != tt.regular {
			t.Errorf("combinedCalendarPeriod(%q) = %v, %v; want %v, %v", tt.exprs, p, r, tt.period, tt.regular)
		}
	}
}

// systemd-analyze prints elapses to the second; these check the
// microseconds that the oracle test cannot.
func TestNextFractionalSeconds(t *testing.T) {
	utc := time.UTC
	tests := []struct {
		expr        string
		after, want time.Time
	}{
		{"*:*:00/0.25", time.Date(2026, 1, 15, 10, 0, 0, 100_000_000, utc), time.Date(2026, 1, 15, 10, 0, 0, 250_000_000, utc)},
		{"*:*:00/0.25", time.Date(2026, 1, 15, 10, 0, 59, 800_000_000, utc), time.Date(2026, 1, 15, 10, 1, 0, 0, utc)},
		{"12:34:56.789", time.Date(2026, 1, 15, 10, 0, 0, 0, utc), time.Date(2026, 1, 15, 12, 34, 56, 789_000_000, utc)},
		// The seventh fractional digit rounds: .0000009 is 1 µs.
		{"10:00:01.0000009", time.Date(2026, 1, 15, 10, 0, 1, 0, utc), time.Date(2026, 1, 15, 10, 0, 1, 1000, utc)},
		// Strictly after: an elapse at "after" itself does not count.
		{"10:00:01.000001", time.Date(2026, 1, 15, 10, 0, 1, 1000, utc), time.Date(2026, 1, 16, 10, 0, 1, 1000, utc)},
		// Sub-µs parts of "after" are dropped first, as systemd works in µs.
		{"10:00:01.000001", time.Date(2026, 1, 15, 10, 0, 1, 999, utc), time.Date(2026, 1, 15, 10, 0, 1, 1000, utc)},
	}
	for _, tt := range tests {
		c, err := parseCalendar(tt.expr)
		if err != nil {
			t.Fatal(err)
		}
		if got := c.Next(tt.after, utc); !got.Equal(tt.want) {
			t.Errorf("%q.Next(%s) = %s, want %s", tt.expr, tt.after.Format(time.RFC3339Nano), got.Format(time.RFC3339Nano), tt.want.Format(time.RFC3339Nano))
		}
	}
}

func TestNextZone(t *testing.T) {
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	tokyo, err := time.LoadLocation("Asia/Tokyo")
	if err != nil {
		t.Fatal(err)
	}
	after := time.Date(2026, 1, 15, 0, 0, 0, 0, time.UTC)

	// The expression's zone wins over loc; the result is in that zone.
	c, _ := parseCalendar("12:00 Europe/Berlin")
	got := c.Next(after, tokyo)
	if want := time.Date(2026, 1, 15, 11, 0, 0, 0, time.UTC); !got.Equal(want) || got.Location().String() != "Europe/Berlin" {
		t.Errorf("Next = %s, want %s in Europe/Berlin", got, want)
	}
	if c.Location() != berlin && c.Location().String() != "Europe/Berlin" {
		t.Errorf("Location() = %v", c.Location())
	}

	// Without a zone, loc is used; nil means UTC.
	c, _ = parseCalendar("12:00")
	if got, want := c.Next(after, tokyo), time.Date(2026, 1, 15, 3, 0, 0, 0, time.UTC); !got.Equal(want) {
		t.Errorf("Next in Tokyo = %s, want %s", got, want)
	}
	if got, want := c.Next(after, nil), time.Date(2026, 1, 15, 12, 0, 0, 0, time.UTC); !got.Equal(want) {
		t.Errorf("Next with nil loc = %s, want %s", got, want)
	}
	if c.Location() != nil {
		t.Errorf("Location() = %v, want nil", c.Location())
	}

	// "UTC" in any case.
	c, _ = parseCalendar("12:00 utc")
	if got, want := c.Next(after, berlin), time.Date(2026, 1, 15, 12, 0, 0, 0, time.UTC); !got.Equal(want) {
		t.Errorf("Next = %s, want %s", got, want)
	}

	// Never again: a year in the past.
	c, _ = parseCalendar("2020-01-01")
	if got := c.Next(after, berlin); !got.IsZero() {
		t.Errorf("Next = %s, want zero", got)
	}
}

func BenchmarkCalendarNext(b *testing.B) {
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		b.Fatal(err)
	}
	for _, expr := range []string{"*-*-* *:25:00", "*:00/10", "Mon *-05~07/1", "daily Europe/London"} {
		c, err := parseCalendar(expr)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(expr, func(b *testing.B) {
			t := time.Date(2026, 1, 15, 10, 17, 23, 0, time.UTC)
			for b.Loop() {
				t = c.Next(t, berlin)
			}
		})
	}
}

// FuzzParseCalendar checks that parsing never panics, that the
// normalized form parses again to itself, and that Next moves forward.
func FuzzParseCalendar(f *testing.F) {
	for _, e := range oracleExprs {
		f.Add(e)
	}
	base := time.Date(2026, 3, 29, 0, 58, 30, 0, time.UTC)
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, expr string) {
		c, err := parseCalendar(expr)
		if err != nil {
			return
		}
		norm := c.String()
		c2, err := parseCalendar(norm)
		if err != nil {
			t.Fatalf("%q normalizes to %q, which does not parse: %v", expr, norm, err)
		}
		if again := c2.String(); again != norm {
			t.Fatalf("%q normalizes to %q, which normalizes to %q", expr, norm, again)
		}
		calendarPeriod(c)
		if n := c.Next(base, berlin); !n.IsZero() && !n.After(base) {
			t.Fatalf("%q: Next(%s) = %s, not after", expr, base, n)
		}
	})
}

func TestNextBeforeEpoch(t *testing.T) {
	// systemd counts µs since the epoch without a sign: a search from
	// before 1970 starts at the epoch.
	c, err := parseCalendar("daily")
	if err != nil {
		t.Fatal(err)
	}
	want := time.Date(1970, 1, 2, 0, 0, 0, 0, time.UTC)
	for _, after := range []time.Time{{}, time.Date(1960, 5, 1, 0, 0, 0, 0, time.UTC), time.Unix(0, 0)} {
		if got := c.Next(after, time.UTC); !got.Equal(want) {
			t.Errorf("Next(%s) = %s, want %s", after, got, want)
		}
	}
}

// Unit-file values reach parseCalendar trimmed; untrimmed ones fail, as
// in systemd-analyze calendar.
func TestParseCalendarBlanks(t *testing.T) {
	for _, e := range []string{"daily ", " daily", "Mon  10:00"} {
		c, err := parseCalendar(e)
		switch e {
		case "Mon  10:00": // blanks between parts are fine
			if err != nil || c.String() != "Mon *-*-* 10:00:00" {
				t.Errorf("parseCalendar(%q) = %v, %v", e, c, err)
			}
		default:
			if err == nil {
				t.Errorf("parseCalendar(%q) = %q, want an error", e, c)
			}
		}
	}
}

// TestParseTimespanOverflow: a span past the largest Duration used to
// wrap negative (found by FuzzParseTimespan); systemd refuses it (ERANGE).
func TestParseTimespanOverflow(t *testing.T) {
	for _, s := range []string{"9223372036854775807us", "300000y", "200000y 200000y"} {
		if d, err := parseTimespan(s, time.Second); err == nil {
			t.Errorf("parseTimespan(%q) = %v, want an error", s, d)
		}
	}
	if d, err := parseTimespan("292y", time.Second); err != nil || d != 292*31557600*time.Second {
		t.Errorf("parseTimespan(292y) = %v, %v", d, err)
	}
}
