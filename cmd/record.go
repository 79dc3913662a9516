package cmd

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/memdiag/memdiag/exposition"
	"github.com/memdiag/memdiag/internal/helptext"
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
	// Reopen, when not nil, starts a new segment at the next sample
	// each time it receives (tests); SIGHUP does the same.
	Reopen <-chan struct{}
}

// recordLong is the long help of newRecordCmd.
var recordLong = helptext.Long("record")

// recordExample is the Example section of newRecordCmd's help.
var recordExample = helptext.Examples("record")

func newRecordCmd(f *factory, runF func(context.Context, *recordOptions) error) *cobra.Command {
	opts := &recordOptions{Watch: watchOptions{F: f, Quiet: true}}
	c := &cobra.Command{
		Use:     "record [flags]",
		Short:   "Record continuously into a store of segments (watch as a service)",
		Long:    recordLong,
		Example: recordExample,
		Args:    noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := opts.complete(); err != nil {
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
	fl.StringVar(&opts.Watch.ListenAddr, "listen", "", "also serve Prometheus /metrics on this address, e.g. "+exposition.DefaultListen+" (docs/fleet.md)")
	webConfigFlag(fl, &opts.Watch.WebConfigFile)
	opts.Watch.samplingFlags(fl, "segment headers", helptext.VictimRecordFlag)
	return c
}

// complete checks record's flags and reads --max-size.
func (o *recordOptions) complete() error {
	w := &o.Watch
	w.KeepCmdline = w.KeepCmdline || w.F.NoRedact
	if err := store.CheckSegment(o.Segment, w.Interval); err != nil {
		return err
	}
	if o.Retention.MaxAge < 0 || o.Duration < 0 {
		return flagErrorf("--max-age and --duration must not be negative")
	}
	if err := o.Retention.Bound(o.Segment, o.MaxSize); err != nil {
		return err
	}
	if w.TopN < 0 {
		return flagErrorf("--top must not be negative")
	}
	if err := w.checkEventsAndStall(); err != nil {
		return err
	}
	return checkWebConfig(w.ListenAddr, w.WebConfigFile)
}

func runRecord(ctx context.Context, o *recordOptions) error {
	f := o.Watch.F
	sg, err := session.OpenStore(o.Dir, o.Segment, o.Retention, f.IO.ErrOut)
	if err != nil {
		return &exitCodeError{Code: exitError, Err: fmt.Errorf("--store: %w", err)}
	}
	defer sg.Unlock()
	so, err := o.Watch.sessionOptions()
	if err != nil {
		return err
	}
	so.Duration = o.Duration
	// The service is often the next memdiag to start after a killed
	// watch --enable-delayacct: it says so and puts the switch back.
	so.DelayAcctLeftover = true
	// /metrics (--listen) is served from the same samples the segments
	// get; the exporter's counters run on across segments.
	s, err := session.Start(ctx, so)
	if err != nil {
		return err
	}
	defer s.Close()
	s.SayWarnings()
	s.SayMetrics()
	defer o.reopenOnHangup(ctx, sg)()
	out, err := s.Run(ctx, sg)
	if err != nil {
		return err
	}
	if out.Err != nil {
		return &exitCodeError{Code: exitError, Err: fmt.Errorf("recording stopped: %w; %d samples of the last segment are readable", out.Err, sg.ReadBack())}
	}
	return nil
}

// reopenOnHangup makes SIGHUP (and o.Reopen) start a new segment at the
// next sample until the returned func is called.
func (o *recordOptions) reopenOnHangup(ctx context.Context, sg *session.Segments) func() {
	poke := sg.Reopen
	onHangup.Store(&poke)
	sg.ReopenOn(ctx, o.Reopen)
	return func() { onHangup.Store(nil) }
}
