package record

import (
	"fmt"
	"time"

	"github.com/memdiag/memdiag/internal/english"
)

// orderCheck notices samples that are not in time order — a recording
// with duplicated lines, samples out of order, or two recordings
// concatenated into one file — so that the reader can say so once,
// naming the first line of each kind, instead of analysing them silently
// as one run. Samples are still handed on in file order.
type orderCheck struct {
	prev     time.Time
	prevSeq  int
	n        int // samples seen
	dupN     int // samples with the previous sample's time
	dupLine  int
	backN    int // samples earlier than the previous one
	backLine int
	backGap  time.Duration
	hdrN     int // header lines after the first line
	hdrLine  int
}

func (o *orderCheck) sample(line int, s *Sample) {
	defer func() { o.prev, o.prevSeq, o.n = s.Time, s.Seq, o.n+1 }()
	if o.n == 0 {
		return
	}
	switch {
	case s.Time.Equal(o.prev):
		if o.dupN == 0 {
			o.dupLine = line
		}
		o.dupN++
	case s.Time.Before(o.prev):
		if o.backN == 0 {
			o.backLine, o.backGap = line, o.prev.Sub(s.Time)
		}
		o.backN++
	}
}

func (o *orderCheck) header(line int) {
	if o.hdrN == 0 {
		o.hdrLine = line
	}
	o.hdrN++
}

// warnings words what was seen, one line per kind, naming the file and
// the first line.
func (o *orderCheck) warnings(name string) []string {
	var w []string
	if o.hdrN > 0 {
		w = append(w, fmt.Sprintf("%s:%d: %s after the first line: several recordings concatenated into one file; they are analysed as one run — split the file at each header line to analyse them apart", name, o.hdrLine, english.Count(o.hdrN, "header line")))
	}
	if o.backN > 0 {
		w = append(w, fmt.Sprintf("%s:%d: a sample %s earlier than the one before it (%s out of time order); the analysis takes them in file order", name, o.backLine, o.backGap.Round(time.Millisecond), english.Count(o.backN, "sample")))
	}
	if o.dupN > 0 {
		w = append(w, fmt.Sprintf("%s:%d: a sample with the same time as the one before it (%s duplicated); the analysis takes them in file order", name, o.dupLine, english.Count(o.dupN, "sample")))
	}
	return w
}
