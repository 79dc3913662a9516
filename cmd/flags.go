package cmd

import (
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

// flagError is pflag's error in memdiag's wording (flagvalue.Explain),
// a usage error.
func flagError(_ *cobra.Command, err error) error { return &usageError{Err: flagvalue.Explain(err)} }

// windowFlags adds --from and --to to a command that reads recordings;
// side names what they apply to ("" for the one recording).
func windowFlags(fl *pflag.FlagSet, from, to *string, side string) {
	if side != "" {
		side = " of " + side
	}
	fl.StringVar(from, "from", "", "read the samples"+side+" from this time: 2026-12-01T06:00:00Z, '2026-12-01 06:00', 06:00, 'yesterday 06:00', -6h, now; or a range 'yesterday 06:00..07:00' (docs/service.md)")
	fl.StringVar(to, "to", "", "... up to this time (same forms, or +2h after --from)")
}
