package units

import (
	"errors"
	"testing"
	"time"
)

func TestFormatBytes(t *testing.T) {
	for _, tt := range []struct {
		n    uint64
		want string
	}{
		{0, "0 B"}, {1023, "1023 B"}, {1024, "1.0 KiB"}, {1536, "1.5 KiB"},
		{64 << 20, "64.0 MiB"}, {7 << 30, "7.0 GiB"}, {1e6, "976.6 KiB"},
	} {
		if got := FormatBytes(tt.n); got != tt.want {
			t.Errorf("FormatBytes(%d) = %q, want %q", tt.n, got, tt.want)
		}
	}
}

func TestParseBytes(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want float64
	}{
		{"1048576", 1 << 20}, {"4MiB", 4 << 20}, {"512 KiB", 512 << 10}, {"1.5GiB", 1.5 * (1 << 30)},
		{"1MB", 1e6}, {"2kB", 2000}, {"2KB", 2000}, {"1.5GB", 1.5e9}, {"1TB", 1e12},
		{"64M", 64 << 20}, {"1G", 1 << 30}, {"10B", 10},
	} {
		got, err := ParseBytes(tt.in)
		if err != nil || got != tt.want {
			t.Errorf("ParseBytes(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		}
	}
	for _, in := range []string{"", "MiB", "-1MiB", "1XB", "1e400"} {
		if _, err := ParseBytes(in); !errors.Is(err, ErrBytes) {
			t.Errorf("ParseBytes(%q) error = %v, want ErrBytes", in, err)
		}
	}
}

func TestParseDuration(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want time.Duration
	}{
		{"500ms", 500 * time.Millisecond}, {"90s", 90 * time.Second}, {"1h30m", 90 * time.Minute},
		{"2d", 48 * time.Hour}, {"1w", 168 * time.Hour}, {"1.5d", 36 * time.Hour}, {"1d12h", 36 * time.Hour},
		{"1w2d3h", (7*24 + 2*24 + 3) * time.Hour},
	} {
		got, err := ParseDuration(tt.in)
		if err != nil || got != tt.want {
			t.Errorf("ParseDuration(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		}
	}
	for _, in := range []string{"", "2", "d", "1d-3h", "1x", "9999999w"} {
		if _, err := ParseDuration(in); err == nil {
			t.Errorf("ParseDuration(%q) accepted", in)
		}
	}
}

func TestParseShare(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want float64
	}{{"2%", 0.02}, {"0.02", 0.02}, {"100%", 1}, {"0", 0}} {
		got, err := ParseShare(tt.in)
		if err != nil || got != tt.want {
			t.Errorf("ParseShare(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		}
	}
	for _, in := range []string{"", "%", "101%", "1.5", "-1%"} {
		if _, err := ParseShare(in); !errors.Is(err, ErrShare) {
			t.Errorf("ParseShare(%q) error = %v, want ErrShare", in, err)
		}
	}
}

func FuzzParseDuration(f *testing.F) {
	for _, s := range []string{"500ms", "2d", "1w2d3h", "1.5d", "d", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := ParseDuration(s)
		if err == nil && d < 0 && s != "" && s[0] != '-' {
			t.Errorf("ParseDuration(%q) = %v, negative", s, d)
		}
	})
}

func FuzzParseBytes(f *testing.F) {
	for _, s := range []string{"4MiB", "1.5GB", "64M", "1048576", "x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if b, err := ParseBytes(s); err == nil && b < 0 {
			t.Errorf("ParseBytes(%q) = %v", s, b)
		}
	})
}

// FuzzParseShare checks that no share string panics ParseShare and that an
// accepted share is a number in [0, 1], errors wrapping ErrShare. Seeds
// are the shares the docs use (gate's psi.some.share 10%, analyze's 2%).
func FuzzParseShare(f *testing.F) {
	for _, s := range []string{"2%", "0.02", "10%", "100%", "1", "101%", "-1%", "NaN", "Inf%", "%", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		x, err := ParseShare(s)
		if err != nil {
			if !errors.Is(err, ErrShare) {
				t.Fatalf("ParseShare(%q): %v does not wrap ErrShare", s, err)
			}
			return
		}
		if !(x >= 0 && x <= 1) {
			t.Fatalf("ParseShare(%q) = %v, not a share", s, x)
		}
	})
}

// TestParseSharePercentIsExact: "N%" is the same float64 as the decimal
// N/100 written out, so a threshold given either way compares alike.
func TestParseSharePercentIsExact(t *testing.T) {
	for _, c := range []struct {
		pct  string
		want float64
	}{{"2%", 0.02}, {"5%", 0.05}, {"35%", 0.35}, {"70%", 0.7}, {"0.5%", 0.005}, {"100%", 1}} { // 35 × 0.01 and 70 × 0.01 are not 0.35 and 0.7
		if got, err := ParseShare(c.pct); err != nil || got != c.want {
			t.Errorf("ParseShare(%q) = %v, %v; want %v", c.pct, got, err, c.want)
		}
	}
}
