package cmd

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/MakeNowJust/heredoc"
	"github.com/spf13/cobra"

	"github.com/memdiag/memdiag/internal/english"
	"github.com/memdiag/memdiag/internal/format"
	"github.com/memdiag/memdiag/internal/iostreams"
	"github.com/memdiag/memdiag/timers"
)

// timersOptions are the flags of `memdiag timers`.
type timersOptions struct {
	IO   *iostreams.IOStreams
	Now  func() time.Time
	Root string
	// NoRedact keeps secrets in job commands (--no-redact).
	NoRedact bool

	All      bool
	Users    bool
	Next     int
	From, To string
	BaseTime string
	TZ       string
	Format   format.Format
	Strict   bool

	// Live connects to the running host's systemd for each timer's last
	// and next trigger; nil source and no error when there is nothing to
	// connect to (--root). Tests replace it.
	Live func(ctx context.Context, root string) (timers.LiveSource, error)
}

// probeLive is timersOptions.Live on a real host: timers.ProbeLive.
func probeLive(ctx context.Context, root string) (timers.LiveSource, error) {
	m, err := timers.ProbeLive(ctx, root)
	if m == nil {
		return nil, err
	}
	return m, nil
}

// timersLong is the long help of newTimersCmd.
var timersLong = heredoc.Doc(`
	List every periodic job defined on the host: systemd timer units (with the
	service each one starts), /etc/crontab, /etc/cron.d/*, users' crontabs in
	/var/spool/cron/crontabs, /etc/anacrontab, and the run-parts folders
	/etc/cron.{hourly,daily,weekly,monthly} with the scripts in them.

	Only jobs that will actually run are listed. A systemd timer runs when the
	boot target pulls it in — through a link in a *.wants/ or *.requires/
	folder, or through Wants=, Requires=, BindsTo= or Upholds= of a unit that is
	itself pulled in (PCP's pmlogger_check.timer is pulled in by BindsTo= in
	pmlogger.service) — and when the conditions of its service hold on this
	host (ConditionPathExists= and similar). --all also lists the others and
	adds an ACTIVE column saying why each job runs or not.

	That is what the files say, as on a mounted image. On the running host
	(no --root) the NOTE also says what happens now: a timer "does not fire
	now" while PID 1 is not systemd, a crontab line "does not run now" while
	no cron daemon runs, and a line that steps aside for systemd runs after
	all when systemd is not running. analyze never names a job the recording
	says did not fire from its projected firings.

	Columns:
	  NAME      timer unit, or crontab file:line, or anacron:<job id>
	  SOURCE    systemd, cron or anacron
	  SCHEDULE  as written; for OnCalendar= also systemd's normalized form
	  PERIOD    the constant interval between firings (30m, 1d, 1w) or irregular
	  NEXT      the next firing (--next N for N of them), in --tz; "never" for a
	            calendar that cannot match; 2026-11-29~18:00 marks a job whose
	            random delay is half its period or more (unpredictable)
	  LAST      when systemd last triggered the timer (running host only)
	  COMMAND   ExecStart= of the timer's service, or the cron/anacron command
	            with the run-parts scripts it runs
	  NOTE      what a known heavy job does to memory and disks; parse errors
	  ACTIVE    (--all) whether it runs, and if not why: on the running host
	            what runs now (systemd or a cron daemon not running), else what
	            its files say; analyze's "Not named" gives the same reason

	--format json adds, per job, the service's User=, Nice=, IOSchedulingClass=,
	CPUQuota= and MemoryMax=, its conditions, AccuracySec=, RandomizedDelaySec=
	(also as randomized_delay_s, with "unpredictable": true when it is half the
	period or more), Persistent= and the chain of units that pulls the timer in.

	Jobs run in the root's zone, from its etc/localtime whether linked or
	copied (a copy is named by the zone database file with the same bytes); --tz
	only changes the zone times are shown and typed in. An etc/localtime that
	cannot be read is an error: memdiag does not guess the zone.

	A systemd timer may start up to AccuracySec= (default 1 min) plus
	RandomizedDelaySec= after its planned time; --from/--to shows that window.
	Monotonic settings (OnBootSec=, OnUnitActiveSec=) depend on boot and on the
	last run, so they give a period but no projected firings.

	Malformed unit files, OnCalendar= expressions and crontab lines are shown as
	file:line: reason under the listing, which still lists everything else;
	--strict makes them exit code 1. A program that runs from two definitions
	(sysstat's sa1 from its timer and from a cron.d line) is listed there too,
	"runs twice: …", without failing --strict.

	Schedules, NEXT and the firings come from the files, so the command also
	works on a mounted image (--root) and where PID 1 is not systemd. On the
	running host (no --root) it also asks systemd over D-Bus for each timer's
	last trigger: the LAST column, and last_trigger/next_elapse in JSON. When
	no systemd runs (a container, PID 1 is not systemd) or the bus does not
	answer, one line on stderr says so and the listing comes from the files.
`)

// timersExample is the Example section of newTimersCmd's help.
var timersExample = examples(`
	# every active periodic job and its next firing
	memdiag timers

	# also inactive ones, with why; three next firings each
	memdiag timers --all --next 3

	# every firing during a load test, in time order
	memdiag timers --from '2026-11-29 12:00' --to '2026-11-29 14:00'

	# every firing in the next two days
	memdiag timers --from now --to 2d

	# reproducible output for a report
	memdiag timers --base-time 2026-11-29T12:00:00Z --tz UTC --format markdown

	# a mounted image; fail when anything is malformed
	memdiag timers --root /mnt/image --strict
`)

func newTimersCmd(f *factory, runF func(*timersOptions) error) *cobra.Command {
	opts := &timersOptions{IO: f.IO, Now: f.Now, Live: probeLive}
	cmd := &cobra.Command{
		Use:     "timers",
		Short:   "List every periodic job on the host — systemd timers, cron, anacron — and when it fires next",
		Long:    timersLong,
		Example: timersExample,
		Args:    noArgs,
		RunE: func(c *cobra.Command, args []string) error {
			opts.Root, opts.NoRedact = f.Root, f.NoRedact
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
	formatFlag(cmd, &opts.Format, format.Table, timers.Formats, "")
	cmd.Flags().BoolVar(&opts.Strict, "strict", false, "exit with code 1 when a unit file, calendar expression or crontab line is malformed")
	return cmd
}

func runTimers(ctx context.Context, opts *timersOptions) error {
	l, err := timers.NewList(ctx, timers.ListOptions{
		Root: opts.Root, All: opts.All, Users: opts.Users, KeepSecrets: opts.NoRedact,
		TZ: opts.TZ, BaseTime: opts.BaseTime, From: opts.From, To: opts.To, Now: opts.Now(), Live: opts.Live,
		Warn: func(err error) { fmt.Fprintln(opts.IO.ErrOut, "memdiag: live timer state:", err) },
	})
	if err != nil {
		return err
	}
	ro := l.Render
	ro.Next, ro.Width, ro.Color = opts.Next, opts.IO.Width(), opts.IO.ColorEnabled()
	if err := iostreams.RenderUnlessDone(ctx, opts.IO.Out, func(w io.Writer) error { return l.Write(w, opts.Format, ro) }); err != nil {
		return err
	}
	if opts.Format == format.CSV {
		// CSV stays one table; the problems go to stderr.
		for _, p := range l.Problems {
			fmt.Fprintln(opts.IO.ErrOut, "memdiag:", p)
		}
	}
	if opts.Strict && len(l.Malformed) > 0 {
		return &exitCodeError{Code: exitError, Err: fmt.Errorf("%s in periodic job definitions (--strict)", english.Count(len(l.Malformed), "problem"))}
	}
	return nil
}
