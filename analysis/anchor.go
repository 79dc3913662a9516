package analysis

import (
	"fmt"
	"time"

	"github.com/memdiag/memdiag/correlate"
	"github.com/memdiag/memdiag/latency"
)

// heyStartup bounds how long after its command's start hey begins
// counting its offsets (its start-up: ~0.2 s measured on a 2-core VM).
const heyStartup = 2 * time.Second

// AnchorAtCommand re-anchors a file of offsets (hey) at the start of the
// command watch wrapped, cmdStart (zero: none recorded, nothing
// changes). Offsets read from standard input (no mtime) count from
// cmdStart. A file ImportFile anchored at its mtime keeps that anchor
// when it lies up to heyStartup after cmdStart: hey counts from its own
// start, a little after the command's, and writes its CSV just after its
// last response, so the mtime is then the closer anchor. Otherwise — a
// copied or touched file — the offsets count from cmdStart.
func AnchorAtCommand(imp *latency.Imported, cmdStart time.Time) {
	r := &imp.Report
	if r.Relative && !cmdStart.IsZero() { // read from stdin: no mtime
		imp.Shift(cmdStart.Sub(r.StartAt))
		r.Relative, r.StartFrom = false, latency.StartCommand
		return
	}
	if r.StartFrom != latency.StartMtime || cmdStart.IsZero() {
		return
	}
	if d := r.StartAt.Sub(cmdStart); d >= 0 && d <= heyStartup {
		r.StartFrom = latency.StartMtime + fmt.Sprintf(", %s after the wrapped command's start (recorded by watch)", correlate.FormatDuration(d))
		return
	}
	imp.Shift(cmdStart.Sub(r.StartAt))
	r.StartFrom = latency.StartCommand
}
