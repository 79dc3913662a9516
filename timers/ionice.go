package timers

import (
	"bufio"
	"regexp"
	"slices"
	"strings"

	"github.com/memdiag/memdiag/internal/rootfs"
)

// idleIOCommand matches a command that puts its work in the idle I/O
// scheduling class: util-linux ionice(1) with -c3, -c 3, -c idle,
// --class idle or --class=3 (options may come before it, -n7 -t), and
// start-stop-daemon(8) --iosched idle (Debian's man-db cron script).
var idleIOCommand = regexp.MustCompile(`\bionice(?:\s+-[nt]\s*\S+|\s+-t)*\s+(?:-c\s*(?:3|idle)\b|--class[=\s]+(?:3|idle)\b)|--iosched[=\s]+idle\b`)

// IdleIOCommand reports whether a command line runs its work in the idle
// I/O class (ionice -c3, start-stop-daemon --iosched idle). Comments
// (from a # at a word's start) are not read.
func IdleIOCommand(cmd string) bool {
	for _, line := range strings.Split(cmd, "\n") {
		if i := strings.Index(line, "#"); i == 0 || i > 0 && (line[i-1] == ' ' || line[i-1] == '\t') {
			line = line[:i]
		}
		if idleIOCommand.MatchString(line) {
			return true
		}
	}
	return false
}

// idleIOScripts returns the scripts (paths relative to root, as in
// Job.Scripts) whose text runs their work in the idle I/O class, as
// Debian's plocate and man-db cron.daily scripts do; the first 64 KiB of
// each is read. The scripts of skip (IdleScripts: they exit at once on
// this host) are left out: they run nothing.
func idleIOScripts(root string, scripts, skip []string) []string {
	var out []string
	for _, sc := range scripts {
		if slices.Contains(skip, sc) {
			continue
		}
		f, err := rootfs.Open(root, strings.TrimPrefix(sc, "/"))
		if err != nil {
			continue
		}
		var b strings.Builder
		sn := bufio.NewScanner(f)
		sn.Buffer(make([]byte, 4096), 64<<10)
		for sn.Scan() && b.Len() < 64<<10 {
			b.WriteString(sn.Text())
			b.WriteByte('\n')
		}
		f.Close()
		if IdleIOCommand(b.String()) {
			out = append(out, sc)
		}
	}
	return out
}
