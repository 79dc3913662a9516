package gate

import (
	"time"

	"github.com/memdiag/memdiag/correlate"
)

// Credit is a breached threshold whose worst moment fell in an episode
// that analyze's culprit model credits to jobs or processes: the same
// verdict as `memdiag analyze` on the recording, never a projected
// firing alone.
type Credit struct {
	Result   int                 // index in Report.Results
	Culprits []correlate.Culprit // credited with an episode at that moment (correlate.CulpritsAt)
	Location *time.Location      // the recording's zone, for its times
}

// NoteCulprits adds to rep.Credits each breached threshold whose worst
// moment falls in an episode that analyze's culprit model credits to a
// job or a process (correlate.CulpritsAt).
func NoteCulprits(rep *Report, res correlate.Result) {
	for i, r := range rep.Results {
		if r.Status != Fail || r.Worst == nil {
			continue
		}
		cs := correlate.CulpritsAt(&res, r.Worst.Start.Add(-res.Interval), r.Worst.End)
		if len(cs) == 0 {
			continue
		}
		loc := res.Location
		if loc == nil {
			loc = time.UTC
		}
		rep.Credits = append(rep.Credits, Credit{Result: i, Culprits: cs, Location: loc})
	}
}
