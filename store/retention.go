package store

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"time"

	"github.com/memdiag/memdiag/units"
)

// Retention bounds a store: segments whose last sample is older than
// MaxAge are removed, then the oldest segments until the store holds at
// most MaxBytes. Zero disables a bound. The segment being written is
// never removed, whatever its size.
type Retention struct {
	MaxAge   time.Duration
	MaxBytes int64
}

// Removed is a segment Prune deleted, and why.
type Removed struct {
	Segment
	Why string // "older than 7d", "store over 1.0 GiB"
}

// Prune applies r to dir at now, keeping the segment at current (the one
// being written; "" for none). It returns what it removed and the bytes
// the store holds afterwards. A segment that disappears meanwhile (an
// operator removed it) is not an error.
func (r Retention) Prune(dir, current string, now time.Time) (removed []Removed, total int64, err error) {
	segs, err := List(dir)
	if err != nil {
		return nil, 0, err
	}
	var kept []Segment
	for _, s := range segs {
		if s.Path != current && r.MaxAge > 0 && now.Sub(s.Last) > r.MaxAge {
			if err := remove(s.Path); err != nil {
				return removed, 0, err
			}
			removed = append(removed, Removed{s, "older than " + FormatAge(r.MaxAge)})
			continue
		}
		kept = append(kept, s)
		total += s.Size
	}
	for i := 0; r.MaxBytes > 0 && total > r.MaxBytes && i < len(kept); i++ {
		s := kept[i]
		if s.Path == current {
			continue
		}
		if err := remove(s.Path); err != nil {
			return removed, total, err
		}
		total -= s.Size
		removed = append(removed, Removed{s, fmt.Sprintf("store over %s", units.FormatBytes(uint64(r.MaxBytes)))})
	}
	return removed, total, nil
}

func remove(path string) error {
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// FormatAge writes a retention age as the flags take it: "7d", "36h",
// "90s".
func FormatAge(d time.Duration) string {
	if d >= units.Day && d%units.Day == 0 {
		return fmt.Sprintf("%dd", d/units.Day)
	}
	s := d.String()
	for _, z := range []string{"0s", "0m"} {
		if t, ok := strings.CutSuffix(s, z); ok && t != "" && (strings.HasSuffix(t, "h") || strings.HasSuffix(t, "m")) {
			s = t
		}
	}
	return s
}
