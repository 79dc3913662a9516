package correlate

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/memdiag/memdiag/record"
	"github.com/memdiag/memdiag/timers"
)

// trimCases are real recordings (in testdata/real) with processes, exec
// churn, episodes, jobs, RSS growth and OOM kills to trim, and two whose
// PSI contradicts itself.
var trimCases = []string{
	"busy-host-loop.jsonl.gz",
	"host-shadowed-loop.jsonl.gz",
	"trial-s7-mem-job.jsonl.gz",
	"trial-s7-oom-v1.jsonl.gz",
	"trial-s7-run3.jsonl.gz",
	"trial-s8-cron.jsonl.gz",
	"../../../testdata/psi-suspect/avg99-total-frozen.jsonl.gz", // PSI contradicting itself
	"../../../testdata/psi-suspect/stall96-counters-frozen.jsonl.gz",
}

// TestTrimIsFresh: a window series fed a whole recording, trimmed once
// a third in, fed the rest and trimmed again, analyses as a series fed
// only the samples from the second cut on (Series.Trim's contract).
func TestTrimIsFresh(t *testing.T) {
	episodes := 0
	for _, name := range trimCases {
		t.Run(name, func(t *testing.T) {
			rec, err := record.ReadFile(filepath.Join("testdata", "real", name))
			if err != nil {
				t.Fatal(err)
			}
			episodes += checkTrimIsFresh(t, rec)
		})
	}
	if episodes == 0 {
		t.Error("no trimmed window had an episode: the comparison proves little")
	}
}

// TestTrimIsFreshSoak is TestTrimIsFresh over a recorder's store named
// by MEMDIAG_SOAK_STORE (bench/soak.sh's /tmp/soak/long/store: an hour
// of a busy host at 1 s, ~20 s here).
func TestTrimIsFreshSoak(t *testing.T) {
	dir := os.Getenv("MEMDIAG_SOAK_STORE")
	if dir == "" {
		t.Skip("MEMDIAG_SOAK_STORE not set")
	}
	segs, _ := filepath.Glob(filepath.Join(dir, "*.jsonl.gz"))
	if len(segs) == 0 {
		t.Fatalf("MEMDIAG_SOAK_STORE=%s holds no segment", dir)
	}
	var all *record.Recording
	for _, p := range segs {
		rec, err := record.ReadFile(p)
		if err != nil {
			t.Logf("%s: %v (left out)", p, err)
			continue
		}
		if all == nil {
			all = rec
			continue
		}
		all.Samples = append(all.Samples, rec.Samples...)
	}
	if all == nil {
		t.Skip("no readable segment")
	}
	checkTrimIsFresh(t, all)
}

// checkTrimIsFresh compares the trimmed and fresh analyses of rec and
// returns the fresh one's episodes.
func checkTrimIsFresh(t *testing.T, rec *record.Recording) int {
	t.Helper()
	n := len(rec.Samples)
	if n < 10 {
		t.Fatalf("%d samples: too few to trim", n)
	}
	cut1, cut2 := n/4, n/3
	sr := NewWindowSeries(rec.Header)
	for i := range rec.Samples[:n/2] {
		sr.Add(&rec.Samples[i])
	}
	opts := Options{Project: timers.Project}
	sr.Analyze(opts) // what an analysis leaves in the series must not matter
	sr.Trim(rec.Samples[cut1].Time)
	for i := n / 2; i < n; i++ {
		sr.Add(&rec.Samples[i])
	}
	sr.Trim(rec.Samples[cut2].Time.Add(-1)) // between samples: the later is kept
	fresh := NewWindowSeries(rec.Header)
	for i := cut2; i < n; i++ {
		fresh.Add(&rec.Samples[i])
	}
	got, want := sr.Analyze(opts), fresh.Analyze(opts)
	gj, _ := json.MarshalIndent(got, "", " ")
	wj, _ := json.MarshalIndent(want, "", " ")
	if !bytes.Equal(gj, wj) {
		t.Errorf("trimmed series' analysis differs from the fresh one's:\n%s", firstDiff(gj, wj))
	}
	if from, _, ok := sr.Span(); !ok || !from.Equal(rec.Samples[cut2].Time) {
		t.Errorf("trimmed span starts %s, want %s", from, rec.Samples[cut2].Time)
	}
	whole := NewWindowSeries(rec.Header)
	for i := range rec.Samples {
		whole.Add(&rec.Samples[i])
	}
	if wh := whole.Analyze(opts); wh.Start.Equal(want.Start) {
		t.Errorf("the whole recording's analysis starts where the window's does (%s): nothing was trimmed", wh.Start)
	}
	return len(want.Episodes)
}

// firstDiff is the lines around the first difference of a and b.
func firstDiff(a, b []byte) string {
	al, bl := bytes.Split(a, []byte("\n")), bytes.Split(b, []byte("\n"))
	for i := 0; i < len(al) || i < len(bl); i++ {
		if i >= len(al) || i >= len(bl) || !bytes.Equal(al[i], bl[i]) {
			lo := max(0, i-3)
			return "trimmed:\n" + string(bytes.Join(al[lo:min(len(al), i+4)], []byte("\n"))) +
				"\nfresh:\n" + string(bytes.Join(bl[lo:min(len(bl), i+4)], []byte("\n")))
		}
	}
	return ""
}

// TestTrimIsFreshHybridChain: the same with a traced chain that places a
// job by its memory cgroup only (hybridScenario): the trimmed series
// keeps the memory cgroups of its kept chains, as a fresh one learns them.
func TestTrimIsFreshHybridChain(t *testing.T) {
	if n := checkTrimIsFresh(t, hybridScenario(true).build()); n == 0 {
		t.Error("no trimmed window had an episode: the comparison proves little")
	}
}
