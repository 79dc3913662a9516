// Package units parses and prints the quantities memdiag's flags,
// thresholds and reports carry — bytes, durations and shares — one way
// everywhere:
//
//   - Bytes: binary (IEC) units are powers of 1024 (KiB = 2^10, MiB = 2^20,
//     GiB = 2^30, TiB = 2^40); decimal (SI) units are powers of 1000 (kB or
//     KB = 10^3, MB = 10^6, GB = 10^9, TB = 10^12); the bare letters K, M,
//     G, T are binary, as in dd(1) and free(1). Printed bytes are always
//     binary with one decimal: "512 B", "1.5 MiB".
//   - Durations: Go's units (ns, us, µs, ms, s, m, h) with days and weeks
//     in front, as systemd.time(7) writes them ("2d", "1w", "1d12h"); a day
//     is 24 h of elapsed time, not a calendar day.
//   - Shares: "2%" or "0.02", both 0.02.
package units

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Byte multiples.
const (
	KiB = 1 << 10
	MiB = 1 << 20
	GiB = 1 << 30
	TiB = 1 << 40
	KB  = 1e3
	MB  = 1e6
	GB  = 1e9
	TB  = 1e12
)

// Day and Week are the lengths of "d" and "w" in a duration.
const (
	Day  = 24 * time.Hour
	Week = 7 * Day
)

// byteUnits lists every byte unit ParseBytes accepts, longest suffix first
// within each family, with its multiple.
var byteUnits = []struct {
	Suffix string
	Bytes  float64
}{
	{"KiB", KiB}, {"MiB", MiB}, {"GiB", GiB}, {"TiB", TiB},
	{"kB", KB}, {"KB", KB}, {"MB", MB}, {"GB", GB}, {"TB", TB},
	{"K", KiB}, {"M", MiB}, {"G", GiB}, {"T", TiB}, {"B", 1},
}

// ErrBytes and ErrDuration are wrapped by the parse errors.
var (
	ErrBytes    = errors.New("want a size such as 512KiB, 64MiB, 1.5GB or 1048576")
	ErrDuration = errors.New("want a duration such as 90s, 30m, 2h, 2d or 1w")
	ErrShare    = errors.New("want a share such as 2% or 0.02")
)

// FormatBytes writes n with a binary (IEC) unit and one decimal:
// "512 B", "1.5 MiB", "7.0 GiB".
func FormatBytes(n uint64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := uint64(unit), 0
	for m := n / unit; m >= unit && exp < 5; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}

// ParseBytes parses "4MiB", "512 KiB", "1.5GB", "64M" or "1048576" (bytes)
// into bytes. Errors wrap ErrBytes.
func ParseBytes(s string) (float64, error) {
	v := strings.TrimSpace(s)
	mult := 1.0
	for _, u := range byteUnits {
		if n, ok := strings.CutSuffix(v, u.Suffix); ok {
			v, mult = strings.TrimSpace(n), u.Bytes
			break
		}
	}
	x, err := strconv.ParseFloat(v, 64)
	if err != nil || x < 0 || math.IsInf(x, 0) || math.IsNaN(x) {
		return 0, fmt.Errorf("%q: %w", s, ErrBytes)
	}
	return x * mult, nil
}

// daysWeeks splits "1w2d3h" into the weeks, the days and Go's part.
var daysWeeks = regexp.MustCompile(`^(?:([0-9]+(?:\.[0-9]*)?)w)?(?:([0-9]+(?:\.[0-9]*)?)d)?(.*)$`)

// ParseDuration parses a duration as Go writes it (time.ParseDuration:
// "500ms", "90s", "1h30m") with days and weeks in front ("2d", "1w",
// "1.5d", "1d12h"). Errors wrap ErrDuration.
func ParseDuration(s string) (time.Duration, error) {
	fail := func() (time.Duration, error) { return 0, fmt.Errorf("%q: %w", s, ErrDuration) }
	m := daysWeeks.FindStringSubmatch(s)
	if m == nil || m[1] == "" && m[2] == "" {
		d, err := time.ParseDuration(s)
		if err != nil {
			return fail()
		}
		return d, nil
	}
	var total float64
	for i, unit := range []time.Duration{Week, Day} {
		if m[i+1] == "" {
			continue
		}
		n, err := strconv.ParseFloat(m[i+1], 64)
		if err != nil {
			return fail()
		}
		total += n * float64(unit)
	}
	if m[3] != "" {
		d, err := time.ParseDuration(m[3])
		if err != nil || d < 0 {
			return fail()
		}
		total += float64(d)
	}
	if total >= math.MaxInt64 {
		return 0, fmt.Errorf("%q: too long", s)
	}
	return time.Duration(total), nil
}

// ParseShare parses "2%" or "0.02" into a share of 1 (0.02). Errors wrap
// ErrShare.
func ParseShare(s string) (float64, error) {
	v := strings.TrimSpace(s)
	n, pct := strings.CutSuffix(v, "%")
	x, err := strconv.ParseFloat(strings.TrimSpace(n), 64)
	if pct {
		x /= 100 // "2%" is the double nearest 0.02, as "0.02" is (× 0.01 is not)
	}
	if err != nil || x < 0 || math.IsNaN(x) || x > 1 {
		return 0, fmt.Errorf("%q: %w", s, ErrShare)
	}
	return x, nil
}
