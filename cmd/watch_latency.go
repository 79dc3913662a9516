package cmd

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/memdiag/memdiag/latency"
	"github.com/memdiag/memdiag/record"
	"github.com/memdiag/memdiag/redact"
)

func init() {
	prev := addWatchCollectors
	addWatchCollectors = func(ctx context.Context, o *WatchOptions, h *record.Header, ws *watchSources) {
		prev(ctx, o, h, ws)
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
				ws.fatal = &FlagError{Err: fmt.Errorf("--probe: %w", err)}
				return
			}
			h.Probe = o.ProbeURL
			if !o.KeepCmdline {
				h.Probe = redact.URL(o.ProbeURL)
			}
			producers.Go(func() { _ = p.Run(lctx, ch) })
		}
		if o.LatencyFile != "" {
			h.LatencyFile = o.LatencyFile
			producers.Go(func() {
				rep, err := latency.Follow(lctx, o.LatencyFile, latency.FollowOptions{
					ImportOptions: latency.ImportOptions{Format: o.LatencyFmt, Location: time.Local},
					OnBad: func(e latency.LineError) {
						src.warn(fmt.Sprintf("--latency: %v", e))
					},
				}, ch)
				if err != nil {
					src.warn(fmt.Sprintf("--latency %s: %v", o.LatencyFile, err))
				} else if err := rep.Err(); err != nil {
					src.warn(fmt.Sprintf("--latency %s: %v", o.LatencyFile, err))
				}
			})
		}
		// Every request sent is handed to the source: the forwarder ends
		// only when the producers have and ch is empty.
		forwarder.Go(func() {
			for r := range ch {
				src.add(r)
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
			forwarder.Wait()
		})
		ws.list = append(ws.list, src)
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
	warns   []string
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
	reqs, warns := l.pending, l.warns
	l.pending, l.warns = nil, nil
	l.mu.Unlock()
	if len(reqs) > 0 {
		// Summarize selects by start time: give it the whole range.
		sum := latency.Summarize(reqs, time.Time{}, s.Time.Add(time.Hour))
		s.Latency = &sum
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
