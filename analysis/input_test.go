package analysis

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memdiag/memdiag/correlate"
	"github.com/memdiag/memdiag/internal/iostreams"
	"github.com/memdiag/memdiag/internal/rootfs"
	"github.com/memdiag/memdiag/internal/usage"
	"github.com/memdiag/memdiag/record"
	"github.com/memdiag/memdiag/timers"
)

const unionPath = "../correlate/testdata/union.jsonl.gz"

// TestInputAnalyzeIsRecording: analyzing one file through Input gives
// Recording's result of the same file, for the plain reader and the
// joining one (a directory holding it) alike.
func TestInputAnalyzeIsRecording(t *testing.T) {
	r, err := record.Open(unionPath)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	co := correlate.Options{Project: timers.Project}
	want, _, err := Recording(r, unionPath, func() {}, Options{Correlate: co, Redact: true})
	if err != nil {
		t.Fatal(err)
	}
	ios, _, _, _ := iostreams.Test()
	for _, in := range []Input{{Paths: []string{unionPath}}, {Paths: []string{filepath.Dir(unionPath) + "/union.jsonl.gz"}, From: "2000-01-01T00:00:00Z"}} {
		got, trace, err := in.Analyze(context.Background(), ios, "", LatencyFlags{}, co, true)
		if err != nil {
			t.Fatalf("%+v: %v", in, err)
		}
		if trace == nil {
			t.Errorf("%+v: no trace; want one when asked", in)
		}
		if got.Intervals != want.Intervals || len(got.Episodes) != len(want.Episodes) || len(got.Culprits) != len(want.Culprits) || len(want.Culprits) == 0 {
			t.Errorf("%+v (joined %v): %d intervals, %d episodes, %d culprits; want %d, %d, %d", in, in.Joined(),
				got.Intervals, len(got.Episodes), len(got.Culprits), want.Intervals, len(want.Episodes), len(want.Culprits))
		}
	}
}

// TestInputRead: gate --recording reads the whole file, as record.ReadFile.
func TestInputRead(t *testing.T) {
	want, err := record.ReadFile(unionPath)
	if err != nil {
		t.Fatal(err)
	}
	ios, _, _, _ := iostreams.Test()
	got, err := Input{Paths: []string{unionPath}}.Read(context.Background(), ios, "--recording")
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Samples) != len(want.Samples) || len(want.Samples) == 0 {
		t.Errorf("read %d samples, want %d", len(got.Samples), len(want.Samples))
	}
}

// TestInputErrors: what the user named wrongly is said with its flag, as
// a usage error (exit 2) or a file that cannot be read (exit 1).
func TestInputErrors(t *testing.T) {
	ios, _, _, _ := iostreams.Test()
	missing := filepath.Join(t.TempDir(), "gone.jsonl")
	cases := []struct {
		in        Input
		usage     bool
		wantInErr string
	}{
		{Input{Paths: []string{"-", unionPath}}, true, "- (stdin) cannot be joined"},
		{Input{Paths: []string{unionPath, missing}}, false, "--recording " + missing},
		{Input{Paths: []string{unionPath}, From: "not a time", WindowFlag: "--before-window"}, true, "--before-window"},
	}
	for _, c := range cases {
		_, err := c.in.Read(context.Background(), ios, "--recording")
		if err == nil || !strings.Contains(err.Error(), c.wantInErr) {
			t.Errorf("%+v: err %v; want one containing %q", c.in, err, c.wantInErr)
			continue
		}
		var ue *usage.Error
		var ne *rootfs.NamedError
		if errors.As(err, &ue) != c.usage || (!c.usage && !errors.As(err, &ne)) {
			t.Errorf("%+v: err %T %v; usage error %v wanted", c.in, err, err, c.usage)
		}
	}
}
