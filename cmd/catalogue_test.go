package cmd

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/memdiag/memdiag/record"
	"github.com/memdiag/memdiag/signal"
)

// TestAnalyzeShowsEveryCatalogueSignal: every signal.Catalogue entry
// reaches analyze's output by itself, with no analyze-side list: each
// episode's JSON "catalogue" (keyed by the top-level catalogue's keys,
// which name it and give its unit) and the --values table carry it,
// named and in the unit of the catalogue. A new entry fails here until
// it shows.
func TestAnalyzeShowsEveryCatalogueSignal(t *testing.T) {
	rec := "../correlate/testdata/real/busy-host-loop.jsonl.gz"
	code, out, errOut := runCmd(t, "analyze", "--format", "json", rec)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	type rate struct{ Mean, Peak *float64 }
	var doc struct {
		Catalogue []struct {
			Name, Key, Unit string
		} `json:"catalogue"`
		Episodes []struct {
			Catalogue map[string]rate `json:"catalogue"`
		} `json:"episodes"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Episodes) == 0 {
		t.Fatal("no episode")
	}
	e := doc.Episodes[0]
	if len(e.Catalogue) != len(signal.Catalogue) || len(doc.Catalogue) != len(signal.Catalogue) {
		t.Fatalf("episode has %d catalogue signals, the document %d, the catalogue %d", len(e.Catalogue), len(doc.Catalogue), len(signal.Catalogue))
	}
	// What the recording holds: a signal is null exactly when its first
	// two samples cannot give it (a counter recorded by a later memdiag).
	rd, err := record.Open(rec)
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	h := rd.Header()
	s0, err := rd.Next()
	if err != nil {
		t.Fatal(err)
	}
	s1, err := rd.Next()
	if err != nil {
		t.Fatal(err)
	}
	for i, sig := range signal.Catalogue {
		c := doc.Catalogue[i]
		if c.Name != sig.Name || c.Key != sig.RateKey() || c.Unit != sig.RateUnit() {
			t.Errorf("catalogue[%d] = %s %s %s, want %s %s %s", i, c.Name, c.Key, c.Unit, sig.Name, sig.RateKey(), sig.RateUnit())
		}
		r, ok := e.Catalogue[sig.RateKey()]
		if !ok {
			t.Errorf("episode catalogue has no %s", sig.RateKey())
			continue
		}
		_, recorded := sig.Between(s0.Reading(&h), s1.Reading(&h))
		if (r.Mean != nil) != recorded || (r.Peak != nil) != recorded ||
			recorded && sig.Kind == signal.Counter && *r.Peak < *r.Mean {
			t.Errorf("%s: mean %v, peak %v; recorded %v", sig.Name, r.Mean, r.Peak, recorded)
		}
	}
	// pgsteal over the first episode, by hand from the recording's
	// samples: pgsteal_anon_pages+pgsteal_file_pages 156775159 at
	// 21:35:33.512974 → 156838651 at 21:35:37.181680, 63492 pages in
	// 3.668706 s = 17306.38 pages/s.
	if r := e.Catalogue[signal.Catalogue[slicesIndex(signal.Reclaimed)].RateKey()]; r.Mean == nil || *r.Mean < 17306.3 || *r.Mean > 17306.5 {
		t.Errorf("reclaimed mean = %v pages/s, want 17306.38", r.Mean)
	}

	code, out, _ = runCmd(t, "analyze", "--values", rec)
	if code != exitOK {
		t.Fatalf("--values: exit %d", code)
	}
	for _, sig := range signal.Catalogue {
		if !strings.Contains(out, " "+sig.Name+" ") || !strings.Contains(out, sig.RateUnit()) {
			t.Errorf("--values lacks the row of %s (%s)", sig.Name, sig.RateUnit())
		}
	}
}

func slicesIndex(sig *signal.Signal) int {
	for i, s := range signal.Catalogue {
		if s == sig {
			return i
		}
	}
	return -1
}
