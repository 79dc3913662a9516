package flagvalue

import (
	"errors"
	"io/fs"
	"testing"
	"time"
)

func TestParseMode(t *testing.T) {
	for in, want := range map[string]fs.FileMode{"0600": 0o600, "600": 0o600, "0640": 0o640, "0o644": 0o644, "0777": 0o777, "00660": 0o660} {
		if got, err := ParseMode(in); err != nil || got != want {
			t.Errorf("ParseMode(%q) = %o, %v; want %o", in, got, err, want)
		}
	}
	for _, in := range []string{"", "0", "0400", "0200", "9", "0800", "1777", "04755", "+600", "-0600", "0x1ff", "rw-r-----", "6_00", "0o", "99999999999999999999999"} {
		if got, err := ParseMode(in); err == nil {
			t.Errorf("ParseMode(%q) = %o, want an error", in, got)
		}
	}
}

// FuzzParseMode checks that --mode never panics and accepts only
// permission bits that keep the owner's read and write.
func FuzzParseMode(f *testing.F) {
	for _, s := range []string{"0600", "640", "0o644", "0777", "04755", "0400", "", "0x1ff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		m, err := ParseMode(s)
		if err != nil {
			return
		}
		if m&^0o777 != 0 || m&0o600 != 0o600 {
			t.Fatalf("ParseMode(%q) = %o", s, m)
		}
		if back, err := ParseMode(Mode{&m}.String()); err != nil || back != m {
			t.Fatalf("ParseMode(%q) = %o; its String %q parses to %o, %v", s, m, Mode{&m}.String(), back, err)
		}
	})
}

func TestParseDuration(t *testing.T) {
	const day = 24 * time.Hour
	for _, tt := range []struct {
		in   string
		want time.Duration
	}{
		{"0", 0}, {"500ms", 500 * time.Millisecond}, {"90s", 90 * time.Second}, {"1h30m", 90 * time.Minute},
		{"2d", 2 * day}, {"1w", 7 * day}, {"1.5d", 36 * time.Hour}, {"1d12h", 36 * time.Hour},
		{"1w2d", 9 * day}, {"2w1d6h30m", 15*day + 6*time.Hour + 30*time.Minute},
	} {
		got, err := ParseDuration(tt.in)
		if err != nil || got != tt.want {
			t.Errorf("ParseDuration(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		}
	}
	for _, in := range []string{"", "2", "2x", "d", "2days", "1d-1h", "-2d", "2d1w", "1.2.3d"} {
		if d, err := ParseDuration(in); !errors.Is(err, ErrDuration) {
			t.Errorf("ParseDuration(%q) = %v, %v; want ErrDuration", in, d, err)
		}
	}
}

// TestPaths: the first --recording goes to First, the rest to Rest, in
// order; an empty one is refused.
func TestPaths(t *testing.T) {
	var first string
	var rest []string
	v := Paths{&first, &rest}
	for _, s := range []string{"a", "b", "c"} {
		if err := v.Set(s); err != nil {
			t.Fatal(err)
		}
	}
	if first != "a" || len(rest) != 2 || rest[1] != "c" || v.String() != "a,b,c" {
		t.Errorf("first %q rest %q String %q", first, rest, v.String())
	}
	if err := v.Set(""); err == nil {
		t.Error("Set(\"\") = nil, want an error")
	}
}
