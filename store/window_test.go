package store

import (
	"strings"
	"testing"
	"time"
)

func TestParseWindow(t *testing.T) {
	cet, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Skip("no tzdata:", err)
	}
	// Tuesday 2026-12-01 10:30:00 in Berlin (UTC+1)
	now := time.Date(2026, 12, 1, 9, 30, 0, 0, time.UTC)
	const f = "2006-01-02 15:04:05 -0700"
	for _, c := range []struct{ from, to, want string }{
		{"yesterday 06:00..07:00", "", "2026-11-30 06:00:00 +0100 .. 2026-11-30 07:00:00 +0100"},
		{"yesterday 23:30..00:30", "", "2026-11-30 23:30:00 +0100 .. 2026-12-01 00:30:00 +0100"},
		{"yesterday 06:00..+90m", "", "2026-11-30 06:00:00 +0100 .. 2026-11-30 07:30:00 +0100"},
		{"-6h", "", "2026-12-01 04:30:00 +0100 .. -"},
		{"-1d12h", "-2h", "2026-11-29 22:30:00 +0100 .. 2026-12-01 08:30:00 +0100"},
		{"06:25", "+10m", "2026-12-01 06:25:00 +0100 .. 2026-12-01 06:35:00 +0100"},
		{"06:25", "2h", "2026-12-01 06:25:00 +0100 .. 2026-12-01 08:25:00 +0100"},
		{"2026-11-29", "2026-11-30", "2026-11-29 00:00:00 +0100 .. 2026-11-30 00:00:00 +0100"},
		{"2026-11-29 06:00", "2026-11-29T07:00:30", "2026-11-29 06:00:00 +0100 .. 2026-11-29 07:00:30 +0100"},
		{"2026-11-29T05:00:00Z", "now", "2026-11-29 06:00:00 +0100 .. 2026-12-01 10:30:00 +0100"},
		{"today", "", "2026-12-01 00:00:00 +0100 .. -"},
		{"", "-1h", "- .. 2026-12-01 09:30:00 +0100"},
		{"", "", "- .. -"},
	} {
		w, err := ParseWindow(c.from, c.to, now, cet)
		if err != nil {
			t.Errorf("ParseWindow(%q, %q): %v", c.from, c.to, err)
			continue
		}
		show := func(t time.Time) string {
			if t.IsZero() {
				return "-"
			}
			return t.In(cet).Format(f)
		}
		if got := show(w.From) + " .. " + show(w.To); got != c.want {
			t.Errorf("ParseWindow(%q, %q) = %s, want %s", c.from, c.to, got, c.want)
		}
	}
	for _, c := range []struct{ from, to, want string }{
		{"yesterday 06:00..07:00", "now", "already gives the end"},
		{"06:00..", "", "both sides"},
		{"tomorrow 06:00", "", "want a time"},
		{"06:00", "05:00", "is not after --from"},
		{"", "+1h", "--from is not given"},
		{"-0s", "", "want a time"},
		{"25:00", "", "want a time"},
		{"2026-02-30", "", "want a time"},
		{"06:00", "+-1h", "positive duration"},
		{"yesterday 6:00", "", "want a time"},
	} {
		_, err := ParseWindow(c.from, c.to, now, cet)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ParseWindow(%q, %q) = %v, want an error with %q", c.from, c.to, err, c.want)
		}
	}
}

func FuzzParseWindow(f *testing.F) {
	for _, s := range []string{"yesterday 06:00..07:00", "-6h", "2026-11-29T05:00:00Z", "06:00..+1h", "today", "now", "2026-11-29 06:00", "1w2d", "..", "+"} {
		f.Add(s, "")
		f.Add("", s)
	}
	now := time.Date(2026, 12, 1, 9, 30, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, from, to string) {
		w, err := ParseWindow(from, to, now, time.UTC)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "--") {
				t.Fatalf("error does not name its flag: %v", err)
			}
			return
		}
		if !w.From.IsZero() && !w.To.IsZero() && !w.To.After(w.From) {
			t.Fatalf("accepted an empty window %v..%v", w.From, w.To)
		}
	})
}
