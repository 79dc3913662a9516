package cmd

import (
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/memdiag/memdiag/internal/flagvalue"
	"github.com/memdiag/memdiag/internal/format"
)

// formatFlag adds -f/--format to c, restricted to allowed, with def as its
// default and shell completion of its values. An unknown name fails at
// parse time with the one wording every command uses (see flagError).
func formatFlag(c *cobra.Command, p *format.Format, def format.Format, allowed []format.Format, extra string) {
	v := format.NewValue(p, def, allowed)
	usage := "output format: " + format.List(allowed)
	if extra != "" {
		usage += " " + extra
	}
	c.Flags().VarP(v, "format", "f", usage)
	_ = c.RegisterFlagCompletionFunc("format", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return v.Names(), cobra.ShellCompDirectiveNoFileComp
	})
}

// flagError turns pflag's errors into memdiag's wording: a bad value is
// `--flag "value": what was wanted`, and every flag error is a usage error.
func flagError(_ *cobra.Command, err error) error {
	var ive *pflag.InvalidValueError
	if errors.As(err, &ive) {
		fl := ive.GetFlag()
		why := errors.Unwrap(ive)
		switch fl.Value.Type() {
		case "duration":
			why = errors.New("want a duration such as 500ms, 10s, 5m or 2h")
			if _, long := fl.Value.(flagvalue.Duration); long {
				why = errors.Unwrap(ive) // flagvalue.ParseDuration's own words list days and weeks
			}
		case "int", "uint", "int64":
			why = errors.New("want a whole number")
		case "float64":
			why = errors.New("want a number")
		case "bool":
			why = errors.New("want true or false")
		case "format":
			if v, ok := fl.Value.(*format.Value); ok {
				why = errors.New("unknown format; want one of " + format.List(v.Allowed))
			}
		}
		return &usageError{Err: fmt.Errorf("--%s %q: %w", fl.Name, ive.GetValue(), why)}
	}
	return &usageError{Err: err}
}

// minDurationKey is the flag annotation that holds a duration flag's
// smallest accepted value (see minDuration); without it the smallest is 0.
const minDurationKey = "memdiag_min_duration"

// minDuration makes checkDurations reject a value of flag name below min
// with the same message as a negative one, so a user who corrects
// "-1s" is not then told that 0 is too short.
func minDuration(fs *pflag.FlagSet, name string, min time.Duration) {
	if err := fs.SetAnnotation(name, minDurationKey, []string{min.String()}); err != nil {
		panic(err) // a programming error: the flag was not defined
	}
}

// checkDurations rejects a negative value in any duration flag of c that
// was given (no memdiag duration — an interval, a gap, a lag, a window —
// can be negative), and a value below a flag's minDuration.
func checkDurations(c *cobra.Command) error {
	var bad error
	c.Flags().Visit(func(fl *pflag.Flag) {
		if bad != nil || fl.Value.Type() != "duration" {
			return
		}
		d, err := time.ParseDuration(fl.Value.String())
		if err != nil {
			if dv, ok := fl.Value.(flagvalue.Duration); ok {
				d = *dv.D
			} else {
				return
			}
		}
		var min time.Duration
		if a := fl.Annotations[minDurationKey]; len(a) == 1 {
			min, _ = time.ParseDuration(a[0])
		}
		switch {
		case min > 0 && d < min:
			bad = flagErrorf("--%s %q: want a duration of at least %s", fl.Name, fl.Value.String(), min)
		case d < 0:
			bad = flagErrorf("--%s %q: want a duration of 0 or more", fl.Name, fl.Value.String())
		}
	})
	return bad
}

// victimFlagHelp is the help of --victim, the same in watch, record and gate.
const victimFlagHelp = "whose latency is measured: `PID`, UNIT (web.service) or CGROUP (its own stall and memory are recorded; default: the service behind a local --probe)"

// ebpfFlagHelp is the --ebpf help of watch and record.
const ebpfFlagHelp = "trace the page-cache chain with eBPF: auto, on or off. Records per sample who added pages to the page cache, whose file pages reclaim evicted and by whom (kswapd, direct, cgroup limit), who stalled in reclaim and for how long, and who refaulted (docs/recording.md, \"chain\"). Costs a few hundred ns of kernel time per page added or evicted, summed in kernel maps read once per sample; needs root (CAP_BPF, CAP_PERFMON) and kernel BTF. auto: skip with a note when it cannot load; on: exit 5 instead"

// windowFlags adds --from and --to to a command that reads recordings;
// side names what they apply to ("" for the one recording).
func windowFlags(fl *pflag.FlagSet, from, to *string, side string) {
	if side != "" {
		side = " of " + side
	}
	fl.StringVar(from, "from", "", "read the samples"+side+" from this time: 2026-12-01T06:00:00Z, '2026-12-01 06:00', 06:00, 'yesterday 06:00', -6h, now; or a range 'yesterday 06:00..07:00' (docs/service.md)")
	fl.StringVar(to, "to", "", "... up to this time (same forms, or +2h after --from)")
}
