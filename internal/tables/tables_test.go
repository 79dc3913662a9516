package tables

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/jedib0t/go-pretty/v6/text"
)

// jobs is a listing shaped like `memdiag timers`: the command lines and
// notes are the Debian units' (testdata/timers/debian).
func jobs() *Table {
	t := New("NAME", "PERIOD", "COMMAND", "NOTE").SetFit(2, Truncate, 0).SetFit(3, Wrap, 0)
	t.AppendRow("fstrim.timer", "1w", "/sbin/fstrim --listed-in /etc/fstab:/proc/self/mountinfo --verbose --quiet-unsupported",
		"fstrim: discards unused blocks on all file systems; can stall I/O")
	t.AppendRow("dpkg-db-backup.timer", "1d", "/usr/libexec/dpkg/dpkg-db-backup", "dpkg database backup: small")
	return t
}

func TestTextPipedKeepsFullContent(t *testing.T) {
	want := strings.Join([]string{
		" NAME                 │ PERIOD │ COMMAND                                                                                │ NOTE",
		"──────────────────────┼────────┼────────────────────────────────────────────────────────────────────────────────────────┼───────────────────────────────────────────────────────────────────",
		" fstrim.timer         │ 1w     │ /sbin/fstrim --listed-in /etc/fstab:/proc/self/mountinfo --verbose --quiet-unsupported │ fstrim: discards unused blocks on all file systems; can stall I/O",
		" dpkg-db-backup.timer │ 1d     │ /usr/libexec/dpkg/dpkg-db-backup                                                       │ dpkg database backup: small",
	}, "\n")
	if diff := cmp.Diff(want, jobs().Text(Options{})); diff != "" {
		t.Errorf("Text(width 0) (-want +got):\n%s", diff)
	}
}

func TestTextFitsTerminal(t *testing.T) {
	got := jobs().Text(Options{Width: 80})
	// A row is " " + NAME 20 + " │ " + PERIOD 6 + " │ " + COMMAND + " │ " +
	// NOTE + " ": 80 - 37 leaves 43 columns for COMMAND (86 wide) and NOTE
	// (65 wide). Both are capped at one width, 21, the largest that fits.
	want := strings.Join([]string{
		" NAME                 │ PERIOD │ COMMAND               │ NOTE",
		"──────────────────────┼────────┼───────────────────────┼───────────────────────",
		" fstrim.timer         │ 1w     │ /sbin/fstrim --liste… │ fstrim: discards",
		"                      │        │                       │ unused blocks on all",
		"                      │        │                       │ file systems; can",
		"                      │        │                       │ stall I/O",
		" dpkg-db-backup.timer │ 1d     │ /usr/libexec/dpkg/dp… │ dpkg database backup:",
		"                      │        │                       │ small",
	}, "\n")
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Text(width 80) (-want +got):\n%s", diff)
	}
	for i, l := range strings.Split(got, "\n") {
		if n := text.StringWidthWithoutEscSequences(l); n > 80 {
			t.Errorf("line %d is %d columns wide, want <= 80: %q", i+1, n, l)
		}
	}
}

// TestTextTooNarrow: flexible columns stop at their minimum; the Keep
// columns are never cut.
func TestTextTooNarrow(t *testing.T) {
	got := jobs().Text(Options{Width: 20})
	if !strings.Contains(got, "dpkg-db-backup.timer") {
		t.Errorf("a Keep column was cut:\n%s", got)
	}
	first := strings.Split(got, "\n")[2]
	if want := " fstrim.timer         │ 1w     │ /sbin/fstri… │ fstrim:"; first != want {
		t.Errorf("first row line = %q, want %q (COMMAND at its minimum of %d)", first, want, minWidth)
	}
}

func TestTextColorHeader(t *testing.T) {
	got := jobs().Text(Options{Color: true})
	if !strings.HasPrefix(got, text.Bold.Sprint(" NAME                 ")) {
		t.Errorf("header not bold with Color: %q", strings.Split(got, "\n")[0])
	}
	header := strings.Split(got, "\n")[0]
	if want := text.Bold.Sprint(" NOTE"); !strings.HasSuffix(header, want) {
		t.Errorf("header ends in %q, want %q (no blanks before the reset)", header[max(0, len(header)-20):], want)
	}
	if plain := jobs().Text(Options{}); strings.Contains(plain, "\x1b[") {
		t.Errorf("escape sequence without Color: %q", plain)
	}
}

func TestMarkdownAndCSVKeepFullContent(t *testing.T) {
	md := jobs().Markdown()
	if !strings.Contains(md, "| /sbin/fstrim --listed-in /etc/fstab:/proc/self/mountinfo --verbose --quiet-unsupported |") {
		t.Errorf("Markdown lost content:\n%s", md)
	}
	csv := jobs().CSV()
	if !strings.HasPrefix(csv, "NAME,PERIOD,COMMAND,NOTE\nfstrim.timer,1w,/sbin/fstrim --listed-in") {
		t.Errorf("CSV:\n%s", csv)
	}
}

// TestTextWrapKeepsLines: a cell's own lines stay lines when the column
// wraps (systemd timers with two OnCalendar= lines).
func TestTextWrapKeepsLines(t *testing.T) {
	tb := New("NAME", "SCHEDULE").SetFit(1, Wrap, 0)
	tb.AppendRow("pmlogger_check.timer", "*-*-* *:25:00\n*-*-* *:55:00\nOnBootSec=1m")
	tb.AppendRow("anacron:cron.monthly", "period @monthly delay 15m when systemd:*-*-* 07..23:30 fires")
	want := strings.Join([]string{
		" NAME                 │ SCHEDULE",
		"──────────────────────┼───────────────────",
		" pmlogger_check.timer │ *-*-* *:25:00",
		"                      │ *-*-* *:55:00",
		"                      │ OnBootSec=1m",
		" anacron:cron.monthly │ period @monthly",
		"                      │ delay 15m when",
		"                      │ systemd:*-*-*",
		"                      │ 07..23:30 fires",
	}, "\n")
	if diff := cmp.Diff(want, tb.Text(Options{Width: 42})); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// TestHideWhenNarrow: a table that wrapping and truncating cannot fit
// hides the listed columns, first listed first, and names them below;
// piped output keeps them all.
func TestHideWhenNarrow(t *testing.T) {
	tb := New("NAME", "SOURCE", "PERIOD", "NEXT", "COMMAND").SetFit(4, Truncate, 12).HideWhenNarrow(1, 2)
	tb.AppendRow("apt-daily-upgrade.timer", "systemd", "1d", "2026-11-30 06:00", "/usr/lib/apt/apt.systemd.daily install")
	got := tb.Text(Options{Width: 60})
	want := " NAME                    │ NEXT             │ COMMAND\n" +
		"─────────────────────────┼──────────────────┼───────────────\n" +
		" apt-daily-upgrade.timer │ 2026-11-30 06:00 │ /usr/lib/apt…\n" +
		"(SOURCE, PERIOD not shown at 60 columns: a wider terminal, a\npipe or --format markdown shows them)"
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
	if full := tb.Text(Options{}); !strings.Contains(full, "systemd") || !strings.Contains(full, "apt.systemd.daily install") {
		t.Errorf("piped output lost columns:\n%s", full)
	}
}
