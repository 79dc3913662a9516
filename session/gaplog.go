package session

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/memdiag/memdiag/internal/english"
	"github.com/memdiag/memdiag/record"
)

// gapLog says the sampler's gaps (record.Gap) on the service's log
// (stderr: the journal) as they happen, at most one line a minute of
// sample time, each line summing the gaps since the last one. The
// recording holds every gap; the log is for whoever watches the service.
type gapLog struct {
	w       io.Writer
	said    time.Time // sample time of the last line
	gaps    int
	late    int
	missed  int
	longest *record.Gap
}

// gapLogEvery is the least time between two lines.
const gapLogEvery = time.Minute

func (l *gapLog) add(g *record.Gap) {
	l.gaps++
	l.missed += g.Missed
	if g.Late > 0 {
		l.late++
	}
	if l.longest == nil || g.End.Sub(g.Start) > l.longest.End.Sub(l.longest.Start) {
		l.longest = g
	}
	if !l.said.IsZero() && g.End.Sub(l.said) < gapLogEvery {
		return
	}
	l.say(g.End)
}

// flush says the gaps not said yet, at the end of the run.
func (l *gapLog) flush() {
	if l.gaps > 0 {
		l.say(l.longest.End)
	}
}

func (l *gapLog) say(at time.Time) {
	var what []string
	if l.missed > 0 {
		what = append(what, fmt.Sprintf("%d %s missed", l.missed, english.Plural(l.missed, "sample")))
	}
	if l.late > 0 {
		what = append(what, fmt.Sprintf("%d late", l.late))
	}
	lg := l.longest
	fmt.Fprintf(l.w, "memdiag: warning: record: %s in %s (the longest %s without a sample, until %s): the recorder was stopped, starved of CPU or blocked; each gap is in the recording\n",
		strings.Join(what, ", "), english.Count(l.gaps, "gap"), lg.End.Sub(lg.Start).Round(100*time.Millisecond), lg.End.UTC().Format(time.TimeOnly))
	*l = gapLog{w: l.w, said: at}
}
