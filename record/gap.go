package record

import (
	"slices"
	"strings"
	"time"
)

// Gap is a stretch of a recording without the samples its interval asks
// for, written as a line of its own ("type":"gap") just before the first
// sample after it (docs/recording.md, "gap"). The Sampler writes one when
// a sample comes more than half an interval after it was due, or when
// samples due were never taken (the recorder was stopped, starved of CPU,
// or blocked); a writer that could not write samples (a full disk)
// writes one when it can write again. Readers of schema 2 that predate
// it skip the line, as they skip every line type they do not know.
type Gap struct {
	Type  string    `json:"type"`  // "gap"
	Start time.Time `json:"start"` // the last sample before the gap
	End   time.Time `json:"end"`   // the first sample after it, the one the line precedes
	// Missed is how many samples were due between Start and End and are
	// not in the recording (not taken, or not written).
	Missed int `json:"missed"`
	// Late is how long after its due time the sample at End was taken,
	// when that was more than half an interval; 0 otherwise.
	Late   time.Duration `json:"late_ns,omitempty"`
	Reason string        `json:"reason"` // GapLate, GapMissed, or the writer's ("no space left on device")
}

// Gap reasons the Sampler gives.
const (
	// GapLate: the sample at End came more than half an interval after
	// it was due, and none was missed.
	GapLate = "late"
	// GapMissed: samples were due and not taken (the sampler did not run
	// for more than an interval).
	GapMissed = "missed"
)

// Unseen is how much longer than one interval the recording went without
// a sample: End − Start − interval, never negative.
func (g *Gap) Unseen(interval time.Duration) time.Duration {
	return max(g.End.Sub(g.Start)-interval, 0)
}

// merge folds g2, a gap line read after g before the same sample, into
// g: one stretch, the samples missed by both, every reason once.
func (g *Gap) merge(g2 *Gap) {
	if g2.Start.Before(g.Start) || g.Start.IsZero() {
		g.Start = g2.Start
	}
	if g2.End.After(g.End) {
		g.End = g2.End
	}
	g.Missed += g2.Missed
	g.Late = max(g.Late, g2.Late)
	if g2.Reason != "" && !slices.Contains(strings.Split(g.Reason, "; "), g2.Reason) {
		if g.Reason != "" {
			g.Reason += "; "
		}
		g.Reason += g2.Reason
	}
}

// WriteGap writes a gap line. [Writer.WriteSample] writes a sample's Gap
// this way before the sample; a writer of its own gaps (samples it could
// not write) sets or merges into the next sample's Gap instead.
func (w *Writer) WriteGap(g *Gap) error {
	g.Type = TypeGap
	return w.writeLine(g)
}
