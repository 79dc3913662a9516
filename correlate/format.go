package correlate

import (
	"fmt"
	"time"

	"github.com/memdiag/memdiag/units"
)

// FormatBytes writes n with a binary (IEC) unit and one decimal: it is
// units.FormatBytes, kept here for this package's callers.
func FormatBytes(n uint64) string { return units.FormatBytes(n) }

// FormatDuration writes d compactly: "10m", "1h30m", "45s", "1.5s",
// "250ms".
func FormatDuration(d time.Duration) string {
	switch {
	case d <= 0:
		return "0s"
	case d < time.Second:
		return d.Round(time.Millisecond).String()
	case d < time.Minute:
		return d.Round(100 * time.Millisecond).String()
	}
	d = d.Round(time.Second)
	h, m, s := int(d/time.Hour), int(d%time.Hour/time.Minute), int(d%time.Minute/time.Second)
	out := ""
	if h > 0 {
		out += fmt.Sprintf("%dh", h)
	}
	if m > 0 {
		out += fmt.Sprintf("%dm", m)
	}
	if s > 0 {
		out += fmt.Sprintf("%ds", s)
	}
	return out
}
