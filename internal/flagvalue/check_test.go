package flagvalue

import (
	"io"
	"io/fs"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/memdiag/memdiag/internal/format"
)

// newSet is a flag set with one flag of each kind Explain words.
func newSet() (*pflag.FlagSet, *time.Duration) {
	fl := pflag.NewFlagSet("t", pflag.ContinueOnError)
	fl.SetOutput(io.Discard)
	interval := new(time.Duration)
	fl.DurationVar(interval, "interval", time.Second, "")
	MinDuration(fl, "interval", 10*time.Millisecond)
	fl.DurationVar(new(time.Duration), "gap", 0, "")
	var long time.Duration
	fl.Var(Duration{D: &long}, "duration", "")
	fl.Int("top", 10, "")
	fl.Float64("min-effect", 10, "")
	fl.Bool("force", false, "")
	var f format.Format
	fl.Var(format.NewValue(&f, format.Table, []format.Format{format.Table, format.JSON}), "format", "")
	var m fs.FileMode
	fl.Var(Mode{M: &m}, "mode", "")
	return fl, interval
}

func TestExplain(t *testing.T) {
	for _, c := range []struct{ args, want string }{
		{"--interval fast", `--interval "fast": want a duration such as 500ms, 10s, 5m or 2h`},
		{"--duration 2x", `--duration "2x": want a duration such as 90s, 30m, 2h, 2d or 1w`},
		{"--top many", `--top "many": want a whole number`},
		{"--min-effect lots", `--min-effect "lots": want a number`},
		{"--force=maybe", `--force "maybe": want true or false`},
		{"--format xml", `--format "xml": unknown format; want one of table, json`},
		{"--nope", "unknown flag: --nope"},
	} {
		fl, _ := newSet()
		err := fl.Parse(strings.Fields(c.args))
		if err == nil {
			t.Fatalf("%s: parsed", c.args)
		}
		if got := Explain(err).Error(); got != c.want {
			t.Errorf("%s: %q, want %q", c.args, got, c.want)
		}
	}
}

func TestCheckDurations(t *testing.T) {
	for _, c := range []struct{ args, want string }{
		{"--interval 10ms --gap 0s --duration 2d", ""},
		{"--interval 1ms", `--interval "1ms": want a duration of at least 10ms`},
		{"--interval -1s", `--interval "-1s": want a duration of at least 10ms`},
		{"--gap -1s", `--gap "-1s": want a duration of 0 or more`},
		{"--duration=-30m", `--duration "-30m0s": want a duration of 0 or more`},
	} {
		fl, _ := newSet()
		if err := fl.Parse(strings.Fields(c.args)); err != nil {
			t.Fatalf("%s: %v", c.args, err)
		}
		got := ""
		if err := CheckDurations(fl); err != nil {
			got = err.Error()
		}
		if got != c.want {
			t.Errorf("%s: %q, want %q", c.args, got, c.want)
		}
	}
}

func TestGivenModeWarning(t *testing.T) {
	fl, _ := newSet()
	if got := GivenModeWarning(fl); got != "" {
		t.Errorf("--mode not given: %q, want none", got)
	}
	if err := fl.Parse([]string{"--mode", "0755"}); err != nil {
		t.Fatal(err)
	}
	if got := GivenModeWarning(fl); !strings.HasPrefix(got, "--mode 0755 makes the files written executable") {
		t.Errorf("--mode 0755: %q", got)
	}
}
