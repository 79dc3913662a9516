package cmd

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/memdiag/memdiag/internal/testenv"
	"github.com/memdiag/memdiag/latency"
	"github.com/memdiag/memdiag/record"
)

// TestLatencyE2EABUnderWatch runs the real ab (apache2-utils) under
// `watch --latency ab.tsv -- ab -g ab.tsv …` against a local server that
// answers every third request with a 500 of the same length: ab -g
// writes no status, so only ab's report on its standard output counts
// them (issue 30.11: ab said 36 non-2xx, memdiag 0). watch passes ab's
// output through and keeps its counts in the end line (record.End.AB);
// analyze says them beside the recording's latency.
func TestLatencyE2EABUnderWatch(t *testing.T) {
	testenv.RequireRoot(t, "a real load tool against a local service")
	ab, err := exec.LookPath("ab")
	if err != nil {
		testenv.Unmet(t, "ab is not installed (apt-get install apache2-utils)")
	}
	var n, failed atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(10 * time.Millisecond)
		if n.Add(1)%3 == 0 {
			failed.Add(1)
			w.WriteHeader(http.StatusInternalServerError)
		}
		fmt.Fprint(w, "ok\n")
	}))
	t.Cleanup(srv.Close)
	bin := testenv.BuildMemdiag(t)
	dir := t.TempDir()
	tsv, rec := filepath.Join(dir, "ab.tsv"), filepath.Join(dir, "run.jsonl")
	const requests = 240 // ~2.5 s at one at a time
	code, stdout, stderr := runBinary(t, bin, "watch", "--interval", "500ms", "-q", "--no-timers", "-o", rec, "--latency", tsv, "--",
		ab, "-n", fmt.Sprint(requests), "-c", "1", "-g", tsv, srv.URL+"/")
	if code != exitOK {
		t.Fatalf("watch: exit %d\n%s", code, stderr)
	}
	// ab's own report, passed through on watch's standard output.
	own, err := latency.ParseABSummary(strings.NewReader(stdout), "watch's stdout")
	if err != nil {
		t.Fatalf("ab's report not passed through: %v\n%s", err, stdout)
	}
	if own.Complete != requests || own.Non2xx != int(failed.Load()) {
		t.Fatalf("ab says %d complete, %d non-2xx; the server answered %d, %d with 500", own.Complete, own.Non2xx, n.Load(), failed.Load())
	}
	r, err := record.ReadFile(rec)
	if err != nil {
		t.Fatal(err)
	}
	if r.End == nil || r.End.AB == nil || r.End.AB.Summary() != own {
		t.Fatalf("end line %+v; want ab's counts %+v", r.End, own)
	}
	code, text, stderr := runBinary(t, bin, "analyze", rec)
	if code != exitOK {
		t.Fatalf("analyze: exit %d\n%s", code, stderr)
	}
	want := fmt.Sprintf("ab's standard output (captured by watch) counts %d failed and %d non-2xx of %d complete requests", own.Failed, own.Non2xx, requests)
	if !strings.Contains(strings.Join(strings.Fields(text), " "), want) {
		t.Errorf("analyze does not say %q:\n%s", want, text)
	}
	// Run through a shell's -c script, ab is recognised too: its report
	// reaches the end line the same way.
	rec2 := filepath.Join(dir, "sh.jsonl")
	n.Store(0)
	failed.Store(0)
	code, _, stderr = runBinary(t, bin, "watch", "--interval", "500ms", "-q", "--no-timers", "-o", rec2, "--",
		"sh", "-c", fmt.Sprintf("cd %s && %s -n 60 -c 1 -g sh.tsv %s/ && echo done", dir, ab, srv.URL))
	if code != exitOK {
		t.Fatalf("watch -- sh -c 'ab …': exit %d\n%s", code, stderr)
	}
	if r2, err := record.ReadFile(rec2); err != nil || r2.End == nil || r2.End.AB == nil ||
		r2.End.AB.Summary().Complete != 60 || r2.End.AB.Summary().Non2xx != int(failed.Load()) {
		t.Fatalf("sh -c 'ab …': end line %+v (%v); want 60 complete, %d non-2xx", r2.End, err, failed.Load())
	}
	// Imported again with --latency, the same counts go to the import line.
	code, text, stderr = runBinary(t, bin, "analyze", rec, "--latency", tsv)
	if code != exitOK {
		t.Fatalf("analyze --latency: exit %d\n%s", code, stderr)
	}
	if !strings.Contains(strings.Join(strings.Fields(text), " "), want) {
		t.Errorf("analyze --latency ab.tsv does not say %q:\n%s", want, text)
	}
}
