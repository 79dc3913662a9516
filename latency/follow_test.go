package latency

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
)

// drain returns what is buffered in ch without waiting.
func drain[T any](ch chan T) []T {
	var got []T
	for {
		select {
		case x := <-ch:
			got = append(got, x)
		default:
			return got
		}
	}
}

func appendFile(t *testing.T, path, s string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(s); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestFollowVegeta(t *testing.T) {
	b, err := os.ReadFile(fixture("vegeta.csv"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(b), "\n") // lines[i] ends in "\n"
	path := filepath.Join(t.TempDir(), "latency-follow.csv")

	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		out := make(chan Request, 100)
		var bad []int
		type result struct {
			rep *ImportReport
			err error
		}
		done := make(chan result)
		go func() {
			rep, err := Follow(ctx, path, FollowOptions{OnBad: func(e LineError) { bad = append(bad, e.Line) }}, out)
			done <- result{rep, err}
		}()
		step := func() { time.Sleep(time.Second); synctest.Wait() }

		step() // the file does not exist yet: Follow waits
		appendFile(t, path, lines[0][:50])
		step() // first line incomplete: no format yet, nothing sent
		if got := drain(out); len(got) != 0 {
			t.Fatalf("sent %v before the first line was complete", got)
		}
		appendFile(t, path, lines[0][50:]+lines[1]+lines[2][:30])
		step()
		if diff := cmp.Diff(vegetaWant[:2], drain(out)); diff != "" {
			t.Errorf("after 2 lines (-want +got):\n%s", diff)
		}
		// The rest of line 3, then a bad line 4, then line 4 of the fixture as line 5.
		appendFile(t, path, lines[2][30:]+"1795988650910000000,200,soon,0,3,,,,3,GET,http://127.0.0.1:18931/\n"+lines[3])
		step()
		if diff := cmp.Diff(vegetaWant[2:4], drain(out)); diff != "" {
			t.Errorf("after 5 lines (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff([]int{4}, bad); diff != "" {
			t.Errorf("bad lines (-want +got):\n%s", diff)
		}

		// A new run truncates the file: Follow starts over at line 1.
		if err := os.WriteFile(path, []byte(lines[9]+lines[8][:20]), 0o644); err != nil {
			t.Fatal(err)
		}
		step()
		if diff := cmp.Diff(vegetaWant[9:10], drain(out)); diff != "" {
			t.Errorf("after truncation (-want +got):\n%s", diff)
		}

		cancel()
		r := <-done
		if r.err != nil {
			t.Fatalf("Follow: %v", r.err)
		}
		// 4 + 1 rows, the bad line, and the cut line 2 of the new run.
		if r.rep.Format != formatVegetaCSV || r.rep.Rows != 5 || r.rep.Bad != 1 || r.rep.Truncated != 2 {
			t.Errorf("report = %+v, want vegeta-csv, 5 rows, 1 bad, truncated line 2", r.rep)
		}
	})
}

func TestFollowIntervalsAndRelative(t *testing.T) {
	dir := t.TempDir()
	locust := filepath.Join(dir, "latency-locust.csv")
	b, err := os.ReadFile(fixture("locust_stats_history.csv"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(locust, b, 0o644); err != nil {
		t.Fatal(err)
	}
	heyFile := filepath.Join(dir, "latency-hey.csv")
	b, err = os.ReadFile(fixture("hey.csv"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(heyFile, b, 0o644); err != nil {
		t.Fatal(err)
	}

	synctest.Test(t, func(t *testing.T) {
		out := make(chan Request)
		// Locust rows without an Intervals channel: an error, not a silent drop.
		if _, err := Follow(t.Context(), locust, FollowOptions{}, out); err == nil || !strings.Contains(err.Error(), "Intervals") {
			t.Errorf("locust without Intervals: err = %v, want one naming FollowOptions.Intervals", err)
		}
		// With one, every row arrives.
		ivs := make(chan IntervalStat, 100)
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		rep, err := Follow(ctx, locust, FollowOptions{Intervals: ivs}, out)
		if err != nil || rep.Rows != 31 || len(ivs) != 31 {
			t.Errorf("locust with Intervals: %v, report %+v, %d rows; want 31", err, rep, len(ivs))
		}
		// hey has only offsets.
		if _, err := Follow(t.Context(), heyFile, FollowOptions{}, out); !errors.Is(err, ErrRelative) {
			t.Errorf("hey without Start: err = %v, want ErrRelative", err)
		}
	})
}

// TestFollowDrainsToEOF: rows written just before the end of the run
// (ctx done) are all read and sent, however many: watch's last sample
// must count every request the load tool wrote.
func TestFollowDrainsToEOF(t *testing.T) {
	b, err := os.ReadFile(fixture("vegeta.csv"))
	if err != nil {
		t.Fatal(err)
	}
	row := strings.SplitAfter(string(b), "\n")[0]
	path := filepath.Join(t.TempDir(), "latency-drain.csv")
	const n = 5000 // ~1.1 MB: many 64 KiB reads
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		out := make(chan Request) // unbuffered: every row waits for the reader
		got := make(chan int)
		go func() {
			c := 0
			for range out {
				c++
			}
			got <- c
		}()
		done := make(chan *ImportReport)
		go func() {
			rep, err := Follow(ctx, path, FollowOptions{}, out)
			if err != nil {
				t.Errorf("Follow: %v", err)
			}
			done <- rep
		}()
		appendFile(t, path, row)
		time.Sleep(time.Second)
		synctest.Wait()
		// The load tool's last burst, then the end of the run at once,
		// with a cut line at the very end.
		appendFile(t, path, strings.Repeat(row, n)+row[:30])
		cancel()
		rep := <-done
		close(out)
		if c := <-got; c != n+1 || rep.Rows != n+1 || rep.Truncated != n+2 {
			t.Errorf("sent %d, report %d rows, truncated line %d; want %d, %d, %d", c, rep.Rows, rep.Truncated, n+1, n+1, n+2)
		}
	})
}

// TestFollowJMeterColumns: watch --latency follows a header-less JMeter
// CSV with custom columns (JMeter 2.13's real file) given the columns.
func TestFollowJMeterColumns(t *testing.T) {
	b, err := os.ReadFile(fixture("jmeter-stall-custom.jtl"))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "latency-custom.jtl")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	save, err := ParseJMeterColumns("timeStamp,elapsed,label,responseCode,responseMessage,success,Connect")
	if err != nil {
		t.Fatal(err)
	}
	synctest.Test(t, func(t *testing.T) {
		out := make(chan Request, 200)
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		rep, err := Follow(ctx, path, FollowOptions{ImportOptions: ImportOptions{JMeter: save}}, out)
		got := drain(out)
		errs := 0
		for _, q := range got {
			if q.Err {
				errs++
			}
		}
		// 116 rows: 94 requests (22 failed) and 22 Transaction Controller rows.
		if err != nil || rep.Format != formatJMeter || rep.Rows != 94 || rep.Transactions != 22 || len(got) != 94 || errs != 22 {
			t.Errorf("%v, report %+v, %d requests, %d failed; want 94, 22", err, rep, len(got), errs)
		}
	})
}
