// Package store keeps a long-running recorder's output as a directory of
// time-sliced segments, as sadc keeps /var/log/sa/saDD, atop its daily
// /var/log/atop/atop_YYYYMMDD and pmlogger its archive volumes: each
// segment is a complete memdiag recording (header, samples, end line)
// that `memdiag analyze` reads alone, named after the UTC time of its
// first sample so that a listing sorts in time order. The package names
// segments, says when to switch to the next one, prunes old ones by age
// and total size, locks the directory against a second recorder, and
// selects and joins the segments that overlap a time window.
package store

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// Prefix and Suffix frame a segment's file name:
// memdiag-20261201T060000Z.jsonl.gz, or memdiag-20261201T060000Z-1.jsonl.gz
// for a second segment started within the same second (two SIGHUPs).
const (
	Prefix = "memdiag-"
	Suffix = ".jsonl.gz"
	// stamp is the UTC time in a segment name (ISO 8601 basic format).
	stamp = "20060102T150405Z"
)

// DefaultDir is where `memdiag record` keeps its segments unless told
// otherwise: systemd's StateDirectory=memdiag.
const DefaultDir = "/var/lib/memdiag"

// Segment is one file of a store.
type Segment struct {
	Path  string
	Start time.Time // from the name: the segment's first sample, to the second (UTC)
	// Last is the file's modification time: the recorder writes (and
	// the kernel stamps) the file at every sample, so it is the time of
	// the last sample written, to within the time to write it.
	Last time.Time
	Size int64 // bytes on disk (compressed)
	// Live is set by [Expand] on the newest segment of a store whose
	// recorder holds its lock ([Held]): the segment being written, which
	// has no end line yet and whose last line may be half written.
	Live bool
}

// segmentName is the file name of a segment whose first sample is at t; n > 0
// tells apart segments started within the same second.
func segmentName(t time.Time, n int) string {
	s := Prefix + t.UTC().Format(stamp)
	if n > 0 {
		s += fmt.Sprintf("-%d", n)
	}
	return s + Suffix
}

// parseSegmentName returns the start time and collision number in a segment's
// file name (no directory), and ok = false for any other name.
func parseSegmentName(name string) (start time.Time, n int, ok bool) {
	rest, ok1 := strings.CutPrefix(name, Prefix)
	rest, ok2 := strings.CutSuffix(rest, Suffix)
	if !ok1 || !ok2 || len(rest) < len(stamp) {
		return time.Time{}, 0, false
	}
	t, err := time.Parse(stamp, rest[:len(stamp)])
	if err != nil {
		return time.Time{}, 0, false
	}
	tail := rest[len(stamp):]
	if tail != "" {
		if tail[0] != '-' || len(tail) < 2 || len(tail) > 4 {
			return time.Time{}, 0, false
		}
		for _, c := range tail[1:] {
			if c < '0' || c > '9' {
				return time.Time{}, 0, false
			}
			n = n*10 + int(c-'0')
		}
		if n == 0 || tail[1] == '0' {
			return time.Time{}, 0, false
		}
	}
	return t, n, true
}

// NextName returns a path in dir for a segment starting at t that does
// not exist yet.
func NextName(dir string, t time.Time) (string, error) {
	for n := 0; n < 1000; n++ {
		p := filepath.Join(dir, segmentName(t, n))
		if _, err := os.Lstat(p); errors.Is(err, fs.ErrNotExist) {
			return p, nil
		} else if err != nil {
			return "", err
		}
	}
	return "", fmt.Errorf("%s: 1000 segments started at %s", dir, t.UTC().Format(time.RFC3339))
}

// List returns the segments in dir, oldest first. Files that are not
// segments (the lock file, anything an operator left there) are not
// listed; a segment removed while listing is skipped.
func List(dir string) ([]Segment, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	type keyed struct {
		Segment
		n int
	}
	var ks []keyed
	for _, e := range ents {
		start, n, ok := parseSegmentName(e.Name())
		if !ok || !e.Type().IsRegular() {
			continue
		}
		fi, err := e.Info()
		if err != nil {
			continue
		}
		ks = append(ks, keyed{Segment{Path: filepath.Join(dir, e.Name()), Start: start, Last: fi.ModTime(), Size: fi.Size()}, n})
	}
	sort.Slice(ks, func(i, j int) bool {
		if !ks[i].Start.Equal(ks[j].Start) {
			return ks[i].Start.Before(ks[j].Start)
		}
		return ks[i].n < ks[j].n
	})
	segs := make([]Segment, len(ks))
	for i, k := range ks {
		segs[i] = k.Segment
	}
	return segs, nil
}

// Boundary is the end of the segment that holds t: the next multiple of
// length since the Unix epoch, so that hourly segments switch on the hour
// and daily ones at midnight UTC, whenever the recorder started.
func Boundary(t time.Time, length time.Duration) time.Time {
	b := t.Truncate(length)
	return b.Add(length)
}
