package cmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/MakeNowJust/heredoc"
	"github.com/spf13/cobra"

	"github.com/memdiag/memdiag/exposition"
	"github.com/memdiag/memdiag/internal/english"
	"github.com/memdiag/memdiag/record"
	"github.com/memdiag/memdiag/session"
	"github.com/memdiag/memdiag/store"
	"github.com/memdiag/memdiag/units"
)

// recordOptions are the settings of `memdiag record`.
type recordOptions struct {
	// Watch holds the sampling settings record shares with watch
	// (interval, top N, cgroup, events, stall onsets); its output,
	// command and live-row fields are unused.
	Watch     watchOptions
	Dir       string
	Segment   time.Duration
	Retention store.Retention
	MaxSize   string
	Duration  time.Duration // 0: until SIGTERM or Ctrl-C
	Listen    string
	// Reopen, when not nil, starts a new segment at the next sample
	// each time it receives (tests); SIGHUP does the same.
	Reopen <-chan struct{}
}

func newRecordCmd(f *factory, runF func(context.Context, *recordOptions) error) *cobra.Command {
	opts := &recordOptions{Watch: watchOptions{F: f, Quiet: true}}
	c := &cobra.Command{
		Use:   "record [flags]",
		Short: "Record continuously into a store of hourly segments, with retention (the service form of watch)",
		Long: heredoc.Doc(`
			Sample what watch samples, at the same cost, for as long as the host runs,
			into a store directory of time-sliced segments (default /var/lib/memdiag):
			one gzip-compressed recording per --segment (an hour by default, switched
			on the hour), named memdiag-YYYYMMDDTHHMMSSZ.jsonl.gz after its first
			sample in UTC. Each segment is a complete recording that 'memdiag analyze'
			reads alone; the sample at a switch ends one segment and starts the next,
			so that analyze, compare and gate --recording read a store directory, or
			several segments, as one continuous recording (see --from/--to there).

			Every sample is flushed to the kernel (a gzip sync flush), so a recorder
			killed with SIGKILL, or a host that loses power, loses at most the
			interval in progress; restarted, it starts a new segment and keeps the
			old ones as they are.

			Retention runs at start and at each switch: segments whose last sample is
			older than --max-age are removed, then the oldest until the store holds at
			most --max-size. The segment being written is never removed.

			Signals: SIGHUP starts a new segment at the next sample (reopen); SIGTERM
			or Ctrl-C takes a last sample, writes the end line and exits 0. A line on
			stderr (the journal under systemd) says the store's state at start and at
			each switch. One recorder per store: a second one exits 1.

			contrib/memdiag.service is a hardened systemd unit for it; see
			docs/service.md.
		`),
		Example: examples(`
			# the service: hourly segments in /var/lib/memdiag, a week or 1 GiB kept
			memdiag record

			# a test store: 10 s segments, keep 1 minute
			memdiag record --store /tmp/st --segment 10s --max-age 1m
		`),
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			w := &opts.Watch
			w.KeepCmdline = w.KeepCmdline || f.NoRedact
			if opts.Segment < time.Second || opts.Segment < 2*w.Interval {
				return flagErrorf("--segment %s is too short (at least 1s and two intervals)", opts.Segment)
			}
			if opts.Retention.MaxAge < 0 || opts.Duration < 0 {
				return flagErrorf("--max-age and --duration must not be negative")
			}
			if opts.Retention.MaxAge > 0 && opts.Retention.MaxAge < opts.Segment {
				return flagErrorf("--max-age %s is shorter than --segment %s: every finished segment would be removed", store.FormatAge(opts.Retention.MaxAge), opts.Segment)
			}
			if opts.MaxSize != "" && opts.MaxSize != "0" {
				b, err := units.ParseBytes(opts.MaxSize)
				if err != nil {
					return flagErrorf("--max-size: %v", err)
				}
				opts.Retention.MaxBytes = int64(b)
			}
			if w.TopN < 0 {
				return flagErrorf("--top must not be negative")
			}
			if err := w.checkEventsAndStall(); err != nil {
				return err
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return runRecord(cmd.Context(), opts)
		},
	}
	fl := c.Flags()
	fl.StringVar(&opts.Dir, "store", store.DefaultDir, "directory of the segments (created 0700 if missing)")
	longDurationVar(fl, &opts.Segment, "segment", time.Hour, "length of a segment, switched on multiples of it since the epoch (1h: on the hour)")
	longDurationVar(fl, &opts.Retention.MaxAge, "max-age", 7*units.Day, "remove segments whose last sample is older than this (0: keep)")
	fl.StringVar(&opts.MaxSize, "max-size", "1GiB", "then remove the oldest segments until the store holds at most this (0: no bound)")
	longDurationVar(fl, &opts.Duration, "duration", 0, "stop after this long (default: until SIGTERM or Ctrl-C)")
	fl.StringVar(&opts.Listen, "listen", "", "also serve Prometheus /metrics on this address, e.g. 127.0.0.1:9840")
	w := &opts.Watch
	fl.DurationVar(&w.Interval, "interval", time.Second, "time between samples (at least 10ms)")
	minDuration(fl, "interval", 10*time.Millisecond)
	fl.StringVar(&w.Cgroup, "cgroup", "", "also record this cgroup v2 directory's memory/io/cpu.pressure")
	fl.StringVar(&w.Victim, "victim", "", victimFlagHelp)
	fl.IntVar(&w.TopN, "top", 10, "processes kept per sample, by I/O in the interval")
	fl.BoolVar(&w.AllDevices, "all-devices", false, "also record partitions and loop, ram and zram devices")
	fl.BoolVar(&w.NoTimers, "no-timers", false, "do not store the host's periodic jobs in the segment headers")
	fl.StringVar(&w.Events, "events", "auto", "process exec/exit events with exit I/O from the kernel: auto, on or off (off: poll /proc only)")
	fl.StringVar(&w.EBPF, "ebpf", "auto", ebpfFlagHelp)
	fl.DurationVar(&w.StallThreshold, "stall-threshold", 100*time.Millisecond, "record a stall onset when PSI memory some reaches this much stall within --stall-window (0: off)")
	fl.DurationVar(&w.StallWindow, "stall-window", time.Second, "moving window of --stall-threshold (500ms..10s)")
	return c
}

// recorder writes the samples of one run into the store's segments.
type recorder struct {
	o       *recordOptions
	errOut  io.Writer
	hdr     *record.Header // the run's header; each segment gets a copy with its own Start
	w       *record.Writer
	seg     record.Header // the header of the segment being written
	end     time.Time     // when the current segment's time is up
	reopen  bool
	exp     *exposition.Exporter // --listen: /metrics
	started int                  // segments started by this run
}

func runRecord(ctx context.Context, o *recordOptions) error {
	f := o.Watch.F
	if err := os.MkdirAll(o.Dir, 0o700); err != nil {
		return &exitCodeError{Code: exitError, Err: fmt.Errorf("--store: %w", err)}
	}
	lock, err := store.Lock(o.Dir)
	if err != nil {
		return &exitCodeError{Code: exitError, Err: fmt.Errorf("--store: %w", err)}
	}
	defer lock.Close()
	r := &recorder{o: o, errOut: f.IO.ErrOut}
	r.previous()

	so, err := o.Watch.sessionOptions()
	if err != nil {
		return err
	}
	srcs, hdr, err := session.BuildSources(ctx, &so)
	if err != nil {
		return err
	}
	defer srcs.Close()
	if srcs.Fatal != nil {
		return srcs.Fatal
	}
	for _, warn := range srcs.Warnings {
		fmt.Fprintln(f.IO.ErrOut, "memdiag: warning:", warn)
	}
	r.hdr = hdr
	if o.Listen != "" {
		// /metrics is served from the same samples the segments get; the
		// exporter's counters run on across segments.
		r.exp = exposition.New(*hdr, exposition.Options{Now: f.Now})
		srv, err := exposition.Listen(ctx, o.Listen, r.exp)
		if err != nil {
			return &exitCodeError{Code: exitError, Err: err}
		}
		defer srv.Close()
		fmt.Fprintf(f.IO.ErrOut, "memdiag: metrics at http://%s/metrics\n", srv.Addr())
	}

	// SIGHUP (and o.Reopen) ask for a new segment at the next sample.
	hup := make(chan struct{}, 1)
	poke := func() {
		select {
		case hup <- struct{}{}:
		default:
		}
	}
	onHangup.Store(&poke)
	defer onHangup.Store(nil)
	if o.Reopen != nil {
		go func() {
			for {
				select {
				case <-o.Reopen:
					poke()
				case <-ctx.Done():
					return
				}
			}
		}()
	}

	sampler := &record.Sampler{Sources: srcs.List, Interval: o.Watch.Interval, Logger: f.Logger, Now: f.Now, Limit: session.Limit(o.Duration, o.Watch.Interval)}
	emit := func(s *record.Sample) error {
		select {
		case <-hup:
			r.reopen = true
		default:
		}
		return r.write(s)
	}
	writeErr := sampler.Run(ctx, emit)
	reason := "duration"
	if sig := stoppedBy(ctx); sig != "" {
		reason = "signal: " + sig
		if writeErr == nil {
			writeErr = sampler.Final(ctx, emit)
		}
	}
	if writeErr != nil {
		reason = "write error"
	}
	if r.w != nil {
		if err := r.w.Close(reason); err != nil && writeErr == nil {
			writeErr = err
		}
		fmt.Fprintf(f.IO.ErrOut, "memdiag: record: stopped (%s); last segment %s: %d samples\n", reason, r.w.Name(), r.w.Samples())
	}
	if writeErr != nil {
		n := 0
		if r.w != nil {
			n = r.w.ReadBack()
		}
		return &exitCodeError{Code: exitError, Err: fmt.Errorf("recording stopped: %w; %d samples of the last segment are readable", writeErr, n)}
	}
	return nil
}

// write puts s in the current segment, switching segments first when
// its time is up or a reopen was asked for: the sample at a switch ends
// the old segment and starts the new one, so each is a whole recording
// of its span and a reader joining them drops the duplicate.
func (r *recorder) write(s *record.Sample) error {
	if r.w != nil && (r.reopen || !s.Time.Before(r.end)) {
		why := "time"
		if r.reopen {
			why = "reopen (SIGHUP)"
		}
		if err := r.w.WriteSample(s); err != nil {
			return err
		}
		if err := r.w.Close("segment switch: " + why); err != nil {
			return err
		}
		r.w = nil
		r.reopen = false
		if err := r.open(s.Time, why); err != nil {
			return err
		}
	} else if r.w == nil {
		if err := r.open(s.Time, "start"); err != nil {
			return err
		}
	}
	if err := r.w.WriteSample(s); err != nil {
		return err
	}
	if r.exp != nil {
		r.exp.Observe(s)
	}
	return nil
}

// open starts a segment at t, applies retention and says the state.
func (r *recorder) open(t time.Time, why string) error {
	if err := os.MkdirAll(r.o.Dir, 0o700); err != nil { // removed by hand meanwhile
		return err
	}
	path, err := store.NextName(r.o.Dir, t)
	if err != nil {
		return err
	}
	w, err := record.Create(path, false)
	if err != nil {
		return err
	}
	r.seg = *r.hdr
	r.seg.Start = t
	if r.started > 0 && !r.o.Watch.NoTimers {
		// the jobs as they are now: a timer installed since the last
		// segment is projected from this one on
		if jobs, err := session.HostJobs(r.o.Watch.F.Root, r.o.Watch.KeepCmdline); err == nil {
			r.seg.Jobs = record.FromJobs(jobs)
		}
	}
	if err := w.WriteHeader(&r.seg); err != nil {
		w.Close("write error")
		return err
	}
	r.w = w
	if r.exp != nil {
		r.exp.SetHeader(r.seg)
	}
	r.end = store.Boundary(t, r.o.Segment)
	r.started++
	removed, total, err := r.o.Retention.Prune(r.o.Dir, path, t)
	for _, rm := range removed {
		fmt.Fprintf(r.errOut, "memdiag: record: removed %s (%s, %s)\n", filepath.Base(rm.Path), units.FormatBytes(uint64(rm.Size)), rm.Why)
	}
	if err != nil {
		fmt.Fprintf(r.errOut, "memdiag: warning: record: retention: %v\n", err)
	}
	r.state(path, why, total)
	return nil
}

// state is the line said at start and at each switch: what is being
// written, why, and what the store holds.
func (r *recorder) state(path, why string, total int64) {
	segs, _ := store.List(r.o.Dir)
	oldest := "-"
	if len(segs) > 0 {
		oldest = segs[0].Start.Format(time.RFC3339)
	}
	keep := "keep all"
	switch ret := r.o.Retention; {
	case ret.MaxAge > 0 && ret.MaxBytes > 0:
		keep = fmt.Sprintf("keep %s and %s", store.FormatAge(ret.MaxAge), units.FormatBytes(uint64(ret.MaxBytes)))
	case ret.MaxAge > 0:
		keep = "keep " + store.FormatAge(ret.MaxAge)
	case ret.MaxBytes > 0:
		keep = "keep " + units.FormatBytes(uint64(ret.MaxBytes))
	}
	fmt.Fprintf(r.errOut, "memdiag: record: %s: writing %s (every %s, until %s); store %s: %s, %s, oldest %s; %s\n",
		why, filepath.Base(path), r.o.Watch.Interval, r.end.UTC().Format(time.RFC3339), r.o.Dir, english.Count(len(segs), "segment"), units.FormatBytes(uint64(total)), oldest, keep)
}

// previous says how the last run's last segment ended: a recorder
// killed (SIGKILL, power loss) leaves it without an end line, readable
// up to its last whole sample.
func (r *recorder) previous() {
	segs, err := store.List(r.o.Dir)
	if err != nil || len(segs) == 0 {
		return
	}
	last := segs[len(segs)-1]
	rd, err := record.Open(last.Path)
	if err != nil {
		fmt.Fprintf(r.errOut, "memdiag: warning: record: previous segment %s cannot be read: %v\n", filepath.Base(last.Path), err)
		return
	}
	defer rd.Close()
	n := 0
	for {
		s, err := rd.Next()
		if err != nil || s == nil {
			if err != nil && !errors.Is(err, io.EOF) {
				fmt.Fprintf(r.errOut, "memdiag: warning: record: previous segment %s: %v\n", filepath.Base(last.Path), err)
			}
			break
		}
		n++
	}
	if rd.End() == nil {
		fmt.Fprintf(r.errOut, "memdiag: record: previous segment %s has no end line (the recorder was killed or the host went down); its %d samples are kept\n", filepath.Base(last.Path), n)
	}
}
