package timers

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/memdiag/memdiag/internal/usage"
)

// FuzzParseWhen checks that no time flag panics, that "now" is now, and
// that an accepted time printed in RFC 3339 parses back to itself.
func FuzzParseWhen(f *testing.F) {
	for _, s := range []string{"now", "2026-11-29T21:43:00+01:00", "2026-11-29 21:43", "2026-11-29 21:43:05", "2026-11-29T21:43", "2026-11-29", "2026-02-30", "9999-12-31T23:59:59.999999999-23:59", "0000-01-01"} {
		f.Add(s)
	}
	now := time.Date(2026, 12, 1, 21, 0, 0, 0, time.UTC)
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, loc := range []*time.Location{time.UTC, berlin} {
			got, err := ParseWhen(s, now, loc)
			if err != nil {
				continue
			}
			if s == "now" && !got.Equal(now) {
				t.Fatalf("now = %v", got)
			}
			// RFC 3339 offsets have no seconds: a zone's local mean
			// time before 1893 (+00:53:28 in Berlin) loses them.
			back, err := ParseWhen(got.Format(time.RFC3339Nano), now, loc)
			if err != nil || back.Sub(got).Abs() >= time.Minute {
				t.Fatalf("ParseWhen(%q) = %v; printed and parsed again: %v, %v", s, got, back, err)
			}
		}
	})
}

func TestParseWindow(t *testing.T) {
	base := time.Date(2026, 12, 1, 21, 0, 0, 0, time.UTC)
	from, to, err := ParseWindow("now", "2d", base, time.UTC)
	if err != nil || !from.Equal(base) || !to.Equal(base.Add(48*time.Hour)) {
		t.Errorf("now..2d = %s..%s, %v", from, to, err)
	}
	for _, tc := range [][3]string{
		{"soon", "2d", "--from: cannot parse time"},
		{"now", "later", `--to "later": want a time`},
		{"2026-12-02", "2026-12-01", "--to must be after --from"},
	} {
		_, _, err := ParseWindow(tc[0], tc[1], base, time.UTC)
		var ue *usage.Error
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), tc[2]) {
			t.Errorf("%s..%s: %T %v; want a usage error %q", tc[0], tc[1], err, err, tc[2])
		}
	}
}
