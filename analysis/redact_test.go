package analysis

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/memdiag/memdiag/record"
)

// memSource is a Source over samples in memory.
type memSource struct {
	h       record.Header
	samples []record.Sample
	warns   []string
}

func (m *memSource) Header() record.Header { return m.h }

func (m *memSource) Each(fn func(*record.Sample)) (*record.Recording, error) {
	for i := range m.samples {
		fn(&m.samples[i])
	}
	return &record.Recording{Header: m.h, Warnings: m.warns}, nil
}

// TestRedacted: every text field a recording carries a secret in comes
// out redacted, in the header, the samples and the warnings (the rules
// are redact's; the values are those of its tests).
func TestRedacted(t *testing.T) {
	const secret, redacted = "app --password=hunter2 -v", "app --password=*** -v"
	src := &memSource{
		h: record.Header{
			Command: []string{"app", "--password", "hunter2", "-v"},
			Probe:   "http://bob:pw1@127.0.0.1:8080/health?token=t1&x=1",
			Jobs:    []record.Job{{Name: "backup.timer", Command: secret, Errors: []string{secret}}},
		},
		samples: []record.Sample{{
			Procs:  []record.ProcIO{{Cmdline: secret}},
			Onsets: []record.StallOnset{{Procs: []record.ProcIO{{Cmdline: secret}}}},
			Events: []record.Event{{Cmdline: secret, ParentCmdline: secret}},
			Errors: []string{secret},
		}},
		warns: []string{secret},
	}
	r := Redacted(src)
	h := r.Header()
	wantH := record.Header{
		Command: []string{"app --password *** -v"},
		Probe:   "http://bob:***@127.0.0.1:8080/health?token=***&x=1",
		Jobs:    []record.Job{{Name: "backup.timer", Command: redacted, Errors: []string{redacted}}},
	}
	if d := cmp.Diff(wantH, h); d != "" {
		t.Errorf("Header (-want +got):\n%s", d)
	}
	var got []record.Sample
	rec, err := r.Each(func(s *record.Sample) { got = append(got, *s) })
	if err != nil {
		t.Fatal(err)
	}
	want := []record.Sample{{
		Procs:  []record.ProcIO{{Cmdline: redacted}},
		Onsets: []record.StallOnset{{Procs: []record.ProcIO{{Cmdline: redacted}}}},
		Events: []record.Event{{Cmdline: redacted, ParentCmdline: redacted}},
		Errors: []string{redacted},
	}}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("samples (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{redacted}, rec.Warnings); d != "" {
		t.Errorf("warnings (-want +got):\n%s", d)
	}
	if d := cmp.Diff(wantH, rec.Header); d != "" {
		t.Errorf("Recording.Header (-want +got):\n%s", d)
	}
}
