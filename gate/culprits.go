package gate

import (
	"fmt"
	"strings"
	"time"

	"github.com/memdiag/memdiag/correlate"
)

// NoteCulprits adds a note for each breached threshold whose worst
// moment falls in an episode that analyze's culprit model credits to a
// job or a process (correlate.CulpritsAt): the same verdict as `memdiag
// analyze` on the recording, never a projected firing alone.
func NoteCulprits(rep *Report, res correlate.Result) {
	for _, r := range rep.Results {
		if r.Status != Fail || r.Worst == nil {
			continue
		}
		cs := correlate.CulpritsAt(&res, r.Worst.Start.Add(-res.Interval), r.Worst.End)
		if len(cs) == 0 {
			continue
		}
		var names []string
		for _, c := range cs {
			names = append(names, fmt.Sprintf("%s (%s, %s confidence %.2f)", c.Name, c.Kind, c.ConfidenceLabel(), c.Confidence))
		}
		loc := res.Location
		if loc == nil {
			loc = time.UTC
		}
		rep.Warnings = append(rep.Warnings, fmt.Sprintf("%s: its worst moment (%s–%s) fell in an episode memdiag analyze credits to %s; see memdiag analyze for the evidence",
			r.Threshold, r.Worst.Start.In(loc).Format("15:04:05"), r.Worst.End.In(loc).Format("15:04:05"), strings.Join(names, ", ")))
	}
}
