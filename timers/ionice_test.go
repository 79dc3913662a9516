package timers

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestIdleIOCommand checks the idle I/O class on real scripts of
// Debian bookworm packages (testdata/timers/debian/SOURCE): plocate's
// cron.daily script sets IONICE="/usr/bin/ionice -c3"; man-db's passes
// start-stop-daemon --iosched idle; logrotate's and sysstat's use neither.
func TestIdleIOCommand(t *testing.T) {
	for name, want := range map[string]bool{
		"etc/cron.daily/plocate":   true,
		"etc/cron.daily/man-db":    true,
		"etc/cron.daily/logrotate": false,
		"etc/cron.daily/sysstat":   false,
	} {
		b, err := os.ReadFile(filepath.Join("../testdata/timers/debian", name))
		if err != nil {
			t.Fatal(err)
		}
		if got := IdleIOCommand(string(b)); got != want {
			t.Errorf("%s: idle I/O %v, want %v", name, got, want)
		}
	}
	for cmd, want := range map[string]bool{
		"ionice -c3 updatedb":                     true,
		"ionice -n7 -c 3 updatedb":                true,
		"ionice --class idle updatedb":            true,
		"ionice -c2 -n7 updatedb":                 false,
		"# ionice -c3 updatedb":                   false,
		"updatedb # ionice -c3":                   false,
		"echo see ionice(1)":                      false,
		"start-stop-daemon --iosched=idle --exec": true,
	} {
		if got := IdleIOCommand(cmd); got != want {
			t.Errorf("%q: idle I/O %v, want %v", cmd, got, want)
		}
	}
}

// FuzzIdleIOCommand: any text is read without a panic, and a line
// commented out as a whole never counts.
func FuzzIdleIOCommand(f *testing.F) {
	for _, s := range []string{"ionice -c3 x", "IONICE=\"/usr/bin/ionice -c3\"\nflock $IONICE nice x", "--iosched idle", "a # ionice -c3"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := IdleIOCommand(s)
		if got && IdleIOCommand("#"+strings.ReplaceAll(s, "\n", "\n#")) {
			t.Errorf("%q commented out still counts", s)
		}
	})
}
