package latency

import (
	"fmt"
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
