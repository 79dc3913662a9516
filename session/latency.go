package session

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/memdiag/memdiag/latency"
	"github.com/memdiag/memdiag/record"
	"github.com/memdiag/memdiag/redact"
)

// addLatencySources wires the --probe and --latency sources.
func addLatencySources(ctx context.Context, o *Options, h *record.Header, ws *Sources) {
	if o.ProbeURL == "" && o.LatencyFile == "" {
		return
	}
	src := &latencySource{}
	lctx, cancel := context.WithCancel(context.Background())
	var producers, forwarder sync.WaitGroup
	ch := make(chan latency.Request, 1024)
	if o.ProbeURL != "" {
		p, err := latency.NewProbe(o.ProbeURL, latency.ProbeOptions{Interval: o.ProbeEvery})
		if err != nil {
			cancel()
			ws.Fatal = &UsageError{Err: fmt.Errorf("--probe: %w", err)}
			return
		}
		h.Probe = o.ProbeURL
		if !o.KeepCmdline {
			h.Probe = redact.URL(o.ProbeURL)
		}
		producers.Go(func() { _ = p.Run(lctx, ch) })
	}
	ivs := make(chan latency.IntervalStat, 64)
	started := make(chan time.Time, 1)
	ws.commandStart = append(ws.commandStart, func(t time.Time) { started <- t })
	if o.LatencyFile != "" {
		h.LatencyFile = o.LatencyFile
		if _, err := os.Stat(o.LatencyFile); err != nil {
			// The load tool may create it later; say so now, and at the
			// end if it never came.
			ws.Warnings = append(ws.Warnings, fmt.Sprintf("--latency %s: %v; waiting for the load tool to create it", o.LatencyFile, errors.Unwrap(err)))
		}
		producers.Go(func() { followLatency(lctx, o, src, ch, ivs, started) })
	}
	// Every request sent is handed to the source: the forwarder ends
	// only when the producers have and ch is empty.
	forwarder.Go(func() {
		for r := range ch {
			src.add(r)
		}
	})
	forwarder.Go(func() {
		for iv := range ivs {
			src.addInterval(iv)
		}
	})
	// The drain before the last sample: the probe stops, and the
	// follower returns once ctx is done — after reading the file to
	// its end, where latency.Follow does so (latency/follow.go) — and
	// what they sent reaches the source.
	ws.drains = append(ws.drains, func() {
		cancel()
		producers.Wait()
		close(ch)
		close(ivs)
		forwarder.Wait()
	})
	ws.List = append(ws.List, src)
}

// followLatency follows --latency as the load tool writes it, sending
// its requests on ch and, for a tool without per-request rows (Locust),
// its interval rows on ivs; started carries the wrapped command's start
// (hey's offsets count from it). Problems reach the recording through
// src's warnings.
func followLatency(lctx context.Context, o *Options, src *latencySource, ch chan<- latency.Request, ivs chan<- latency.IntervalStat, started chan time.Time) {
	// A parser that panics on a row it did not expect ends
	// the following with a warning, not the recorder.
	defer func() {
		if r := recover(); r != nil {
			src.warn(fmt.Sprintf("--latency %s: stopped following: internal error: %v", o.LatencyFile, r))
		}
	}()
	rep, err := latency.Follow(lctx, o.LatencyFile, latency.FollowOptions{
		ImportOptions: latency.ImportOptions{Format: o.LatencyFmt, Location: time.Local, JMeter: o.JMeter},
		// hey's offsets count from its start: the wrapped command's.
		StartFunc: func() (time.Time, bool) {
			select {
			case t := <-started:
				started <- t
				return t, true
			default:
				return time.Time{}, false
			}
		},
		Intervals: ivs,
		OnBad: func(e latency.LineError) {
			src.warn(fmt.Sprintf("--latency: %v", e))
		},
	}, ch)
	switch {
	case err != nil:
		src.warn(fmt.Sprintf("--latency %s: %v", o.LatencyFile, err))
	case rep.Format == "":
		src.warn(fmt.Sprintf("--latency %s: no request read: the file never appeared or stayed empty", o.LatencyFile))
	case rep.Err() != nil:
		src.warn(fmt.Sprintf("--latency %s: %v", o.LatencyFile, rep.Err()))
	}
}

// latencySource turns the requests of the probe or a followed results
// file into one latency.Summary per sample: the requests that completed
// since the previous sample (a slow request counts in the interval it
// ended in, so a 2.5 s request is never lost for not having finished by
// the sample after its start).
type latencySource struct {
	mu      sync.Mutex
	pending []latency.Request
	ivs     []latency.IntervalStat // rows of a tool without per-request rows (Locust)
	warns   []string
}

func (l *latencySource) addInterval(iv latency.IntervalStat) {
	l.mu.Lock()
	l.ivs = append(l.ivs, iv)
	l.mu.Unlock()
}

func (l *latencySource) Name() string { return "latency" }

func (l *latencySource) add(r latency.Request) {
	l.mu.Lock()
	l.pending = append(l.pending, r)
	l.mu.Unlock()
}

func (l *latencySource) warn(s string) {
	l.mu.Lock()
	l.warns = append(l.warns, s)
	l.mu.Unlock()
}

func (l *latencySource) Fill(ctx context.Context, s *record.Sample) error {
	l.mu.Lock()
	reqs, ivs, warns := l.pending, l.ivs, l.warns
	l.pending, l.ivs, l.warns = nil, nil, nil
	l.mu.Unlock()
	if len(reqs) == 0 && len(ivs) > 0 {
		// Locust: its Aggregated rows written since the last sample,
		// combined as analyze does (latency.BucketIntervals).
		sum := latency.BucketIntervals(ivs, "Aggregated", []time.Time{{}, s.Time.Add(time.Hour)})[0]
		if sum.Count > 0 {
			s.Latency = record.FromLatency(&sum)
		}
	}
	if len(reqs) > 0 {
		// Summarize selects by start time: give it the whole range.
		sum := latency.Summarize(reqs, time.Time{}, s.Time.Add(time.Hour))
		s.Latency = record.FromLatency(&sum)
		if sum.Errors == sum.Count {
			// A dead service answers fast: never let it pass for a
			// healthy one silently.
			return fmt.Errorf("all %d requests failed (status %d%s)", sum.Count, reqs[0].Status, map[bool]string{true: ", no response"}[reqs[0].Status == 0])
		}
	}
	if len(warns) > 0 {
		return fmt.Errorf("%s", warns[0])
	}
	return nil
}
