package report

import (
	"bytes"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/memdiag/memdiag/record"
)

// pipeWriter fails every write with EPIPE after n succeed.
type pipeWriter struct {
	n      int
	writes int
}

func (p *pipeWriter) Write(b []byte) (int, error) {
	p.writes++
	if p.writes > p.n {
		return 0, syscall.EPIPE
	}
	return len(b), nil
}

// TestLiveRows: no row for the first sample, the legend once on stderr,
// the header every 20 rows, and no more writes once stdout is closed
// (EPIPE); quiet writes nothing.
func TestLiveRows(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	hdr := &record.Header{Interval: time.Second, PageSize: 4096}
	sample := func(i int) *record.Sample {
		return &record.Sample{Seq: i, Time: t0.Add(time.Duration(i) * time.Second)}
	}

	var out, errOut bytes.Buffer
	l := NewLiveRows(&out, &errOut, hdr, true, LiveOptions{Width: 0})
	for i := range 22 {
		l.Row(sample(i), i == 21)
	}
	if l.Rows != 21 || l.Broken {
		t.Errorf("%d rows, broken %v; want 21, not broken", l.Rows, l.Broken)
	}
	header := strings.SplitN(out.String(), "\n", 2)[0]
	if n := strings.Count(out.String(), header+"\n"); n != 2 {
		t.Errorf("header written %d times in 21 rows, want 2", n)
	}
	if strings.Count(errOut.String(), l.view.Legend()) != 1 {
		t.Errorf("legend: stderr %q, want it once", errOut.String())
	}

	pw := &pipeWriter{n: 2}
	l = NewLiveRows(pw, &errOut, hdr, true, LiveOptions{})
	for i := range 6 {
		l.Row(sample(i), false)
	}
	if !l.Broken || l.Rows != 2 || pw.writes != 3 {
		t.Errorf("after EPIPE: broken %v, %d rows, %d writes; want broken, 2 rows, 3 writes", l.Broken, l.Rows, pw.writes)
	}

	out.Reset()
	l = NewLiveRows(&out, &errOut, hdr, false, LiveOptions{})
	l.Row(sample(0), false)
	l.Row(sample(1), false)
	if out.Len() != 0 || l.Rows != 0 {
		t.Errorf("quiet: wrote %q", out.String())
	}
}
