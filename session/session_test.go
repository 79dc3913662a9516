package session

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/memdiag/memdiag/record"
)

// TestLimit: --duration is a whole number of intervals, rounded up, plus
// the first sample at 0; no duration is no limit.
func TestLimit(t *testing.T) {
	for _, tc := range []struct {
		d, iv time.Duration
		want  int
	}{
		{0, time.Second, 0},
		{-time.Second, time.Second, 0},
		{5 * time.Second, time.Second, 6},
		{5500 * time.Millisecond, time.Second, 7},
		{time.Second, 500 * time.Millisecond, 3},
	} {
		if got := Limit(tc.d, tc.iv); got != tc.want {
			t.Errorf("Limit(%s, %s) = %d, want %d", tc.d, tc.iv, got, tc.want)
		}
	}
}

// memSink is a Sink that keeps what it is given.
type memSink struct {
	hdr     *record.Header
	samples []*record.Sample
	reason  string
	closed  int
}

func (m *memSink) WriteHeader(h *record.Header) error { m.hdr = h; return nil }
func (m *memSink) WriteSample(s *record.Sample) error {
	m.samples = append(m.samples, s)
	return nil
}
func (m *memSink) Close(reason string) error { m.reason = reason; m.closed++; return nil }

// TestRunDuration: a --duration run without a command writes the header,
// Limit samples (no last sample: it ended on its last tick) and the end
// line "duration", and shows each sample to the observers. The fixture
// root is a real 6.18 /proc (testdata/linux-6.18/SOURCE).
func TestRunDuration(t *testing.T) {
	s, err := Start(context.Background(), Options{
		Root: "../testdata/linux-6.18", Interval: 10 * time.Millisecond, Duration: 30 * time.Millisecond,
		TopN: 5, NoTimers: true, Events: "off", Summarize: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	seen := 0
	s.Observe(func(*record.Sample, bool) { seen++ })
	sink := &memSink{}
	out, err := s.Run(context.Background(), sink)
	if err != nil {
		t.Fatal(err)
	}
	// --duration is a number of grid slots: each is a sample, or a
	// sample missed (recorded in the next one's gap) when the sampler
	// was starved, as on a loaded runner at 10 ms.
	want := Limit(30*time.Millisecond, 10*time.Millisecond)
	missed := 0
	for _, smp := range sink.samples {
		if smp.Gap != nil {
			missed += smp.Gap.Missed
		}
	}
	if out.Reason != "duration" || out.Err != nil || out.Command != nil {
		t.Errorf("outcome %+v, want duration, no error, no command", out)
	}
	got := len(sink.samples)
	if sink.hdr != s.Header || got+missed != want || seen != got || s.Summary.Samples != got {
		t.Errorf("header %v, %d samples + %d missed, %d seen, %d summarised; want the session's header, %d slots, and every sample seen and summarised",
			sink.hdr != nil, got, missed, seen, s.Summary.Samples, want)
	}
	if sink.closed != 1 || sink.reason != "duration" {
		t.Errorf("closed %d times with %q, want once with \"duration\"", sink.closed, sink.reason)
	}
}

// TestRunCommand: the command after -- is run, its exit ends the run
// with a last sample, and its result is in the outcome and the end line;
// one that cannot start is a *CommandStartError and nothing is sampled.
func TestRunCommand(t *testing.T) {
	start := func(cmd ...string) (*Session, *memSink) {
		s, err := Start(context.Background(), Options{
			Root: "../testdata/linux-6.18", Interval: 20 * time.Millisecond,
			NoTimers: true, Events: "off", Command: cmd,
		})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(s.Close)
		return s, &memSink{}
	}
	s, sink := start("sh", "-c", "sleep 0.1; exit 3")
	out, err := s.Run(context.Background(), sink)
	if err != nil {
		t.Fatal(err)
	}
	if out.Command == nil || !out.Command.Failed() || out.Command.ExitCode != 3 {
		t.Errorf("command result %+v, want exit code 3", out.Command)
	}
	if out.Reason != "command exited: command "+out.Command.Describe() || sink.reason != out.Reason {
		t.Errorf("reason %q, end line %q", out.Reason, sink.reason)
	}
	if s.Header.CommandStart.IsZero() || len(sink.samples) < 2 {
		t.Errorf("command start %v, %d samples; want a start and a first and last sample", s.Header.CommandStart, len(sink.samples))
	}

	s, sink = start("/nonexistent/command")
	_, err = s.Run(context.Background(), sink)
	var se *CommandStartError
	if !errors.As(err, &se) || len(sink.samples) != 0 || sink.reason != "command failed to start" {
		t.Errorf("err %v, %d samples, end line %q; want a CommandStartError, none, \"command failed to start\"", err, len(sink.samples), sink.reason)
	}
}
