package store

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"time"

	"github.com/memdiag/memdiag/internal/usage"
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

// CheckSegment refuses a segment length (--segment) under a second or
// under two sampling intervals (--interval): each segment is to be a
// recording of its own. Its error is a *usage.Error.
func CheckSegment(segment, interval time.Duration) error {
	if segment < time.Second || segment < 2*interval {
		return usage.Errorf("--segment %s is too short (at least 1s and two intervals)", segment)
	}
	return nil
}

// Bound checks r.MaxAge (--max-age; not negative, cmd checks) against
// the segment length, since a MaxAge shorter than a segment would remove
// every finished one, and sets r.MaxBytes from maxSize (--max-size: a
// size such as "1GiB"; "" or "0": no bound). Its errors are *usage.Error
// naming the flags.
func (r *Retention) Bound(segment time.Duration, maxSize string) error {
	if r.MaxAge > 0 && r.MaxAge < segment {
		return usage.Errorf("--max-age %s is shorter than --segment %s: every finished segment would be removed", FormatAge(r.MaxAge), segment)
	}
	if maxSize != "" && maxSize != "0" {
		b, err := units.ParseBytes(maxSize)
		if err != nil {
			return usage.Errorf("--max-size: %v", err)
		}
		r.MaxBytes = int64(b)
	}
	return nil
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
