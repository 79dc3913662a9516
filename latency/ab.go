package latency

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// abWholeSecond is the resolution of ab -g's "seconds" column.
const abWholeSecond = time.Second

// ab parses ApacheBench's `ab -g FILE` output (support/ab.c, gnuplot
// format), ab's only per-request output: a tab-separated header and one
// row per request,
//
//	starttime	seconds	ctime	dtime	ttime	wait
//	Tue Dec 01 19:04:11 2026	1796151851	0	1	1	1
//
// seconds is the request start in whole Unix seconds (apr_time_sec:
// truncated), read as the middle of its second; ttime is the total time in
// whole milliseconds (ctime connect, dtime processing, wait waiting). The
// rows carry no status and no error: ab counts failed and non-2xx
// requests only in its summary, so memdiag cannot tell which failed.
type ab struct {
	rep                *ImportReport
	init               bool
	secs, ttime, width int
}

func (a *ab) parse(rec string) (row, bool, bool, error) {
	f := strings.Split(rec, "\t")
	if !a.init {
		a.init = true
		a.secs, a.ttime = indexOf(f, "seconds"), indexOf(f, "ttime")
		if a.secs < 0 || a.ttime < 0 {
			a.secs, a.ttime = -1, -1
			return row{}, false, false, fmt.Errorf("%w: ab -g file must start with its header (starttime\tseconds\tctime\tdtime\tttime\twait)", ErrParse)
		}
		a.width = max(a.secs, a.ttime) + 1
		return row{}, false, false, nil
	}
	if a.secs < 0 {
		return row{}, false, false, fmt.Errorf("%w: no ab -g header", ErrParse)
	}
	if err := need(f, a.width); err != nil {
		return row{}, false, false, err
	}
	s := strings.TrimSpace(f[a.secs])
	if !isDigits(s) || len(s) > 11 {
		return row{}, false, false, bad("seconds", fmt.Errorf("want Unix seconds, got %q", f[a.secs]))
	}
	t, err := parseEpoch(s)
	if err != nil {
		return row{}, false, false, bad("seconds", err)
	}
	ms, err := atoiField("ttime", f[a.ttime])
	if err != nil {
		return row{}, false, false, err
	}
	if ms < 0 || int64(ms) > maxElapsedMs {
		return row{}, false, false, bad("ttime", fmt.Errorf("out of range: %d", ms))
	}
	if a.rep != nil {
		a.rep.Resolution = max(a.rep.Resolution, abWholeSecond)
	}
	return row{req: Request{Start: t.Add(abWholeSecond / 2), Latency: time.Duration(ms) * time.Millisecond}}, true, false, nil
}

// ABSummary is what ab's standard output says about failures, the only
// place ab says it: counts for the whole run, never which request failed
// or when. Source: support/ab.c output_results.
//
//	Complete requests:      70
//	Failed requests:        3
//	   (Connect: 0, Receive: 0, Length: 3, Exceptions: 0)
//	Non-2xx responses:      22
//
// watch keeps it in the recording's end line (record.End.AB, its wire
// form record.ABReport) when the command it runs is ab.
type ABSummary struct {
	Complete int // "Complete requests:"
	// Failed is "Failed requests:": connect and receive errors, responses
	// whose length differs from the first one's (Length), exceptions.
	Failed                               int
	Connect, Receive, Length, Exceptions int
	Non2xx                               int  // "Non-2xx responses:"; ab omits the line when 0
	HasNon2xx                            bool // the line was there
	TimeTaken                            time.Duration
}

// TotalsNote says what ab's standard output (from: where it was read)
// counted: totals for the run that no interval can take, so the failure
// figures of the analysis leave them out.
func (s ABSummary) TotalsNote(from string) string {
	return fmt.Sprintf("ab's standard output (%s) counts %d failed and %d non-2xx of %d complete requests; "+
		"ab -g writes no status, so no interval can take them and the failure figures here leave them out",
		from, s.Failed, s.Non2xx, s.Complete)
}

// Unplaced is how many requests ab counted as failed or non-2xx: none
// of them can be placed in time, since ab -g rows carry no status.
// Failed and Non-2xx may overlap (a 500 of another length counts in
// both), so this is an upper bound, at least max(Failed, Non2xx).
func (s ABSummary) Unplaced() int { return s.Failed + s.Non2xx }

// ParseABSummary reads ab's standard output (its end-of-run report). It
// fails if the text has no "Complete requests:" line: not ab's output.
func ParseABSummary(r io.Reader, name string) (ABSummary, error) {
	var s ABSummary
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 4096), 1<<20)
	complete := false
	n := 0
	for sc.Scan() {
		n++
		line := strings.TrimSpace(sc.Text())
		key, val, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		val = strings.TrimSpace(val)
		num := func() (int, error) {
			f := strings.Fields(val)
			if len(f) == 0 {
				return 0, fmt.Errorf("%s:%d: %w: %q", name, n, ErrParse, line)
			}
			v, err := strconv.Atoi(f[0])
			if err != nil || v < 0 {
				return 0, fmt.Errorf("%s:%d: %w: %q", name, n, ErrParse, line)
			}
			return v, nil
		}
		var err error
		switch key {
		case "Complete requests":
			s.Complete, err = num()
			complete = true
		case "Failed requests":
			s.Failed, err = num()
		case "Non-2xx responses":
			s.Non2xx, err = num()
			s.HasNon2xx = true
		case "Time taken for tests":
			f := strings.Fields(val)
			if len(f) > 0 {
				if v, e := strconv.ParseFloat(f[0], 64); e == nil && v >= 0 && v < 1e9 {
					s.TimeTaken = time.Duration(v * float64(time.Second))
				}
			}
		case "(Connect":
			// "(Connect: 0, Receive: 0, Length: 3, Exceptions: 0)"
			for _, part := range strings.Split(strings.Trim(line, "()"), ",") {
				k, v, _ := strings.Cut(part, ":")
				x, e := strconv.Atoi(strings.TrimSpace(v))
				if e != nil || x < 0 {
					continue
				}
				switch strings.TrimSpace(k) {
				case "Connect":
					s.Connect = x
				case "Receive":
					s.Receive = x
				case "Length":
					s.Length = x
				case "Exceptions":
					s.Exceptions = x
				}
			}
		}
		if err != nil {
			return s, err
		}
	}
	if err := sc.Err(); err != nil {
		return s, fmt.Errorf("%s: %w", name, err)
	}
	if !complete {
		return s, fmt.Errorf("%s: %w: no \"Complete requests:\" line: not ab's standard output", name, ErrParse)
	}
	return s, nil
}
