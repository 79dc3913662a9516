package timersreport

import (
	"fmt"
	"io"
	"strings"

	"github.com/memdiag/memdiag/timers"
)

// Problems are the lines shown under a listing: the definitions' errors
// (l.Malformed, "file:line: reason"), then one line for each program
// that runs from two definitions (l.Duplicates): "runs twice: A (10m)
// and B (5m): sa1 1 1", definitions in job order with their periods.
func Problems(l timers.Listing) []string {
	out := append([]string{}, l.Malformed...)
	for _, d := range l.Duplicates {
		out = append(out, duplicateLine(d))
	}
	return out
}

// duplicateLine says one program run from several definitions.
func duplicateLine(d timers.Duplicate) string {
	names := make([]string, len(d.Jobs))
	for n, j := range d.Jobs {
		names[n] = fmt.Sprintf("%s (%s)", j.Name, timers.PeriodString(j))
	}
	times := "twice"
	if len(d.Jobs) > 2 {
		times = fmt.Sprintf("%d times", len(d.Jobs))
	}
	list := strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
	return fmt.Sprintf("runs %s: %s: %s", times, list, d.Command)
}

// WriteProblems writes each of l's problems on a line of its own,
// "memdiag: " first: how a CSV listing, which stays one table, has them
// said on stderr.
func WriteProblems(w io.Writer, l timers.Listing) {
	for _, p := range Problems(l) {
		fmt.Fprintln(w, "memdiag:", p)
	}
}
