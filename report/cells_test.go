package report

import (
	"strings"
	"testing"

	"github.com/memdiag/memdiag/correlate"
	"github.com/memdiag/memdiag/timers"
)

// A recurring script whose children did its I/O (trial-s7-run3: a loop
// starts trial-nightly.sh every 20 s, whose md5sum reads 400 MiB) gets a
// CULPRIT cell naming that child and its bytes, as the legend promises:
// "trial-nightly.sh: md5sum 400.0 MiB", not the bare script name (trial
// s8 F-2).
func TestPatternCellNamesChild(t *testing.T) {
	r := analyzeFile(t, "real/trial-s7-run3.jsonl.gz", correlate.Options{Project: timers.Project})
	if len(r.Culprits) == 0 || r.Culprits[0].Name != "trial-nightly.sh" || r.Culprits[0].Kind != correlate.KindProcess {
		t.Fatalf("culprits %v, want the process trial-nightly.sh first", r.Culprits)
	}
	named := 0
	for i := range r.Episodes {
		e := &r.Episodes[i]
		if e.Culprit != "trial-nightly.sh" {
			continue
		}
		named++
		got := culpritCell(&r, e)
		if !strings.HasPrefix(got, "trial-nightly.sh: md5sum ") || !strings.HasSuffix(got, " MiB") {
			t.Errorf("episode %d: cell %q, want trial-nightly.sh: md5sum N MiB", i, got)
		}
	}
	if named < 7 {
		t.Errorf("%d episodes credited to trial-nightly.sh, want 7", named)
	}
}
