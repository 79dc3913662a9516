package cmd

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/memdiag/memdiag/internal/format"
	"github.com/memdiag/memdiag/internal/helptext"
	"github.com/memdiag/memdiag/internal/iostreams"
	"github.com/memdiag/memdiag/report/timersreport"
	"github.com/memdiag/memdiag/timers"
)

// timersOptions are the flags of `memdiag timers`.
type timersOptions struct {
	IO *iostreams.IOStreams
	// ListOptions are what is listed (--all, --user-units, --from, --to,
	// --base-time, --tz); RunE adds the factory's root, --no-redact
	// (KeepSecrets) and the time now. Its Live connects to the running
	// host's systemd for each timer's last and next trigger (tests
	// replace it); runTimers sets Warn.
	timers.ListOptions

	Next   int
	Format format.Format
	Strict bool
}

func newTimersCmd(f *factory, runF func(*timersOptions) error) *cobra.Command {
	opts := &timersOptions{IO: f.IO, ListOptions: timers.ListOptions{Live: timers.ProbeLiveSource}}
	cmd := &cobra.Command{
		Use:     "timers",
		Short:   "List every periodic job (systemd, cron, anacron) and its next run",
		Long:    helptext.Long("timers"),
		Example: helptext.Examples("timers"),
		Args:    noArgs,
		RunE: func(c *cobra.Command, args []string) error {
			opts.Root, opts.KeepSecrets, opts.Now = f.Root, f.NoRedact, f.Now()
			if opts.Next < 1 {
				return flagErrorf("--next %d: want at least 1", opts.Next)
			}
			if opts.From != "" && opts.To == "" {
				return flagErrorf("--from %q needs --to: the end of the window, such as 2d", opts.From)
			}
			if opts.From == "" && opts.To != "" {
				opts.From = "now" // timers --to 2d: the next two days
			}
			if runF != nil {
				return runF(opts)
			}
			return runTimers(c.Context(), opts)
		},
	}
	cmd.Flags().BoolVarP(&opts.All, "all", "a", false, "also list jobs that will not run, and say why each job runs or not")
	cmd.Flags().BoolVar(&opts.Users, "user-units", false, "also read systemd user units (etc/systemd/user, ~/.config/systemd/user)")
	cmd.Flags().IntVarP(&opts.Next, "next", "n", 1, "number of next firings to show per job")
	cmd.Flags().StringVar(&opts.From, "from", "", "list every firing from this time (RFC 3339, 'YYYY-MM-DD HH:MM[:SS]' in --tz, or 'now', the default when only --to is given)")
	cmd.Flags().StringVar(&opts.To, "to", "", "... up to this time (same forms, or a duration after --from such as 2h, 2d or 1w)")
	cmd.Flags().StringVar(&opts.BaseTime, "base-time", "", "compute next firings from this time instead of now (same forms as --from)")
	cmd.Flags().StringVar(&opts.TZ, "tz", "", "IANA time zone to show times in (default: the root's etc/localtime); jobs always run in the root's zone, linked or copied")
	formatFlag(cmd, &opts.Format, format.Table, timersreport.Formats, "")
	cmd.Flags().BoolVar(&opts.Strict, "strict", false, "exit with code 1 when a unit file, calendar expression or crontab line is malformed")
	return cmd
}

func runTimers(ctx context.Context, opts *timersOptions) error {
	lo := opts.ListOptions
	lo.Warn = func(err error) { fmt.Fprintln(opts.IO.ErrOut, "memdiag: live timer state:", err) }
	l, err := timers.NewList(ctx, lo)
	if err != nil {
		return err
	}
	ro := timersreport.RenderOptions{Next: opts.Next, Width: opts.IO.Width(), Color: opts.IO.ColorEnabled()}
	if err := iostreams.RenderUnlessDone(ctx, opts.IO.Out, func(w io.Writer) error { return timersreport.Write(w, l, opts.Format, ro) }); err != nil {
		return err
	}
	if opts.Format == format.CSV {
		timersreport.WriteProblems(opts.IO.ErrOut, l.Listing) // CSV stays one table
	}
	if opts.Strict {
		return l.StrictError()
	}
	return nil
}
