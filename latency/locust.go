package latency

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// locustWindow is Locust's CURRENT_RESPONSE_TIME_PERCENTILE_WINDOW
// (locust/stats.py): "current" percentiles cover about the last 10 s.
const locustWindow = 10 * time.Second

// locust parses the stats history of `locust --headless --csv PREFIX`
// (PREFIX_stats_history.csv, locust/stats.py StatsCSVFileWriter). Locust
// writes no per-request rows: every second (CSV_STATS_INTERVAL_SEC) it
// appends one row per request name (only with --csv-full-history) and one
// "Aggregated" row:
//
//	Timestamp,User Count,Type,Name,Requests/s,Failures/s,50%,66%,75%,80%,90%,95%,98%,99%,99.9%,99.99%,100%,Total Request Count,Total Failure Count,Total Median Response Time,Total Average Response Time,Total Min Response Time,Total Max Response Time,Total Average Content Size
//	1795988634,2,GET,/hello.txt,3.000000,0.000000,5,5,6,7,7,7,7,7,7,7,7,13,0,5,6.160518615375238,3.549083999985214,12.322862000019086,3.0
//
// Each row becomes an [IntervalStat], not requests. Limitations, all from
// what Locust writes:
//   - Timestamp is whole Unix seconds, when the row was written.
//   - Count, Errors and Mean are exact for the requests completed since
//     the previous row of the same name (deltas of the Total columns).
//   - The percentile columns (50%, 95%, 99%, 100% → P50, P95, P99, Max,
//     in ms) cover a sliding window of about the last 10 s with
//     --csv-full-history (Window = 10 s), but the whole run so far without
//     it (Window = 0), which makes them useless for spikes: run Locust with
//     --csv-full-history. The parser knows it is a full history once it has
//     seen a per-name row.
//   - Locust rounds response times before computing percentiles (to 10 ms
//     above 100 ms, to 100 ms above 1 s), and its percentiles are "N/A"
//     (stored as 0) when no request completed.
//   - Locust flushes the file every 10 s, so up to 10 s of rows at the end
//     of a run may be missing.
type locust struct {
	init                                                         bool
	ts, users, typ, name, p50, p95, p99, p100, total, fails, avg int
	width                                                        int
	full                                                         bool
	prev                                                         map[string]locustTotals
}

type locustTotals struct {
	n, fails int
	avgMs    float64
}

func (*locust) multiline() {}

func (l *locust) parse(rec string) (row, bool, bool, error) {
	f, err := splitCSV(rec, ',')
	if err != nil {
		return row{}, false, false, fmt.Errorf("%w: %w", ErrParse, err)
	}
	if !l.init {
		idx := func(n string) int { return indexOf(f, n) }
		l.ts, l.users, l.typ, l.name = idx("Timestamp"), idx("User Count"), idx("Type"), idx("Name")
		l.p50, l.p95, l.p99, l.p100 = idx("50%"), idx("95%"), idx("99%"), idx("100%")
		l.total, l.fails, l.avg = idx("Total Request Count"), idx("Total Failure Count"), idx("Total Average Response Time")
		for _, c := range []int{l.ts, l.name, l.p50, l.p95, l.p99, l.p100, l.total, l.fails, l.avg} {
			if c < 0 {
				return row{}, false, false, fmt.Errorf("%w: not a Locust stats history header (Timestamp,User Count,Type,Name,…,Total Average Response Time,…)", ErrParse)
			}
		}
		l.init = true
		l.width = max(l.ts, l.users, l.typ, l.name, l.p50, l.p95, l.p99, l.p100, l.total, l.fails, l.avg) + 1
		return row{}, false, false, nil
	}
	if err := need(f, l.width); err != nil {
		return row{}, false, false, err
	}
	t, err := parseTime(f[l.ts], nil)
	if err != nil {
		return row{}, false, false, bad("Timestamp", err)
	}
	iv := IntervalStat{End: t, Name: f[l.name]}
	if l.typ >= 0 {
		iv.Method = f[l.typ]
	}
	if l.users >= 0 {
		if iv.Users, err = atoiField("User Count", f[l.users]); err != nil {
			return row{}, false, false, err
		}
	}
	var cur locustTotals
	if cur.n, err = atoiField("Total Request Count", f[l.total]); err != nil {
		return row{}, false, false, err
	}
	if cur.fails, err = atoiField("Total Failure Count", f[l.fails]); err != nil {
		return row{}, false, false, err
	}
	if cur.avgMs, err = strconv.ParseFloat(f[l.avg], 64); err != nil || !(cur.avgMs >= 0) || cur.avgMs*1e6 > math.MaxInt64 {
		return row{}, false, false, bad("Total Average Response Time", fmt.Errorf("bad number %q", f[l.avg]))
	}
	for _, p := range []struct {
		col int
		to  *time.Duration
	}{{l.p50, &iv.P50}, {l.p95, &iv.P95}, {l.p99, &iv.P99}, {l.p100, &iv.Max}} {
		if s := f[p.col]; s != "N/A" {
			if *p.to, err = parseFloatUnit(s, time.Millisecond); err != nil {
				return row{}, false, false, bad(strings.TrimSpace(f[p.col]), err)
			}
		}
	}
	key := iv.Method + " " + iv.Name
	prev := l.prev[key]
	if cur.n < prev.n { // stats were reset
		prev = locustTotals{}
	}
	l.prev[key] = cur
	iv.Count, iv.Errors = cur.n-prev.n, max(cur.fails-prev.fails, 0)
	if iv.Count > 0 {
		ms := (cur.avgMs*float64(cur.n) - prev.avgMs*float64(prev.n)) / float64(iv.Count)
		if ms*1e6 > math.MaxInt64 {
			return row{}, false, false, bad("Total Average Response Time", fmt.Errorf("%s gives a mean of %g ms over the interval, past 292 years", f[l.avg], ms))
		}
		iv.Mean = time.Duration(math.Round(max(ms, 0) * 1e6))
	}
	if iv.Name != "Aggregated" {
		l.full = true
	}
	if l.full {
		iv.Window = locustWindow
	}
	return row{iv: &iv}, true, false, nil
}
