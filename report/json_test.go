package report

import (
	"bytes"
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/memdiag/memdiag/correlate"
	"github.com/memdiag/memdiag/timers"
)

// jsonDocV2 is what these tests read of the analyze JSON's shape 2.
type jsonDocV2 struct {
	SchemaVersion int                 `json:"schema_version"`
	Catalogue     []jsonCatalogueRate `json:"catalogue"`
	Procs         []jsonProc          `json:"procs"`
	Ancestries    [][]string          `json:"ancestries"`
	Episodes      []struct {
		Started   []int               `json:"started"`
		Exited    []int               `json:"exited"`
		Catalogue map[string]jsonRate `json:"catalogue"`
	} `json:"episodes"`
}

func renderDoc(t *testing.T, r correlate.Result) ([]byte, jsonDocV2) {
	t.Helper()
	var b bytes.Buffer
	if err := renderJSON(&b, r); err != nil {
		t.Fatal(err)
	}
	var doc jsonDocV2
	if err := json.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatalf("not the shape-2 document: %v", err)
	}
	return b.Bytes(), doc
}

// resolve is procs[i] as the correlate.ProcActivity it states, its
// ancestry index replaced by the chain.
func (d *jsonDocV2) resolve(t *testing.T, i int) correlate.ProcActivity {
	t.Helper()
	if i < 0 || i >= len(d.Procs) {
		t.Fatalf("index %d outside procs (%d rows)", i, len(d.Procs))
	}
	p := d.Procs[i]
	if p.StartedBy != nil {
		t.Errorf("procs[%d] carries started_by %q beside ancestry", i, p.StartedBy)
	}
	a := p.ProcActivity
	if p.Ancestry != nil {
		if *p.Ancestry < 0 || *p.Ancestry >= len(d.Ancestries) {
			t.Fatalf("procs[%d]: ancestry %d outside ancestries (%d)", i, *p.Ancestry, len(d.Ancestries))
		}
		a.StartedBy = d.Ancestries[*p.Ancestry]
	}
	return a
}

// Issue 31 item 6: the JSON of a real recording (trial-s7-mem-job: 8
// episodes, 2,188 started or exited entries, 835 of them a process that
// began and ended in the same episode) states each process and each
// started_by chain once; an episode's lists are indexes that resolve to
// exactly what the analysis found, and its catalogue is keyed by the
// top-level catalogue, which alone names and titles the signals.
func TestJSONStatesEachProcessOnce(t *testing.T) {
	r := analyzeFile(t, "real/trial-s7-mem-job.jsonl.gz", correlate.Options{Project: timers.Project})
	raw, doc := renderDoc(t, r)
	if doc.SchemaVersion != JSONSchemaVersion || JSONSchemaVersion != 2 {
		t.Errorf("schema_version %d, want 2", doc.SchemaVersion)
	}
	if len(doc.Episodes) != len(r.Episodes) || len(r.Episodes) != 8 {
		t.Fatalf("%d episodes in the JSON, %d analysed, want 8", len(doc.Episodes), len(r.Episodes))
	}
	refs, entries := make([]int, len(doc.Procs)), 0
	for i := range r.Episodes {
		e, je := &r.Episodes[i], &doc.Episodes[i]
		for _, l := range []struct {
			name string
			want []correlate.ProcActivity
			got  []int
		}{{"started", e.Started, je.Started}, {"exited", e.Exited, je.Exited}} {
			if len(l.got) != len(l.want) {
				t.Fatalf("episode %d: %d %s, analysed %d", i, len(l.got), l.name, len(l.want))
			}
			for k, ix := range l.got {
				if got := doc.resolve(t, ix); !reflect.DeepEqual(got, l.want[k]) {
					t.Errorf("episode %d %s[%d] = procs[%d] = %+v, analysed %+v", i, l.name, k, ix, got, l.want[k])
				}
				refs[ix]++
				entries++
			}
		}
		if len(je.Catalogue) != len(doc.Catalogue) {
			t.Errorf("episode %d: %d catalogue rates, the document's catalogue %d", i, len(je.Catalogue), len(doc.Catalogue))
		}
		for k, c := range e.Catalogue {
			got, ok := je.Catalogue[doc.Catalogue[k].Key]
			if !ok || !reflect.DeepEqual(got, jsonRate{finitePtr(c.Mean), finitePtr(c.Peak)}) {
				t.Errorf("episode %d catalogue[%s] = %+v (present %v), analysed mean %v peak %v", i, doc.Catalogue[k].Key, got, ok, c.Mean, c.Peak)
			}
		}
	}
	if entries != 2188 || len(doc.Procs) != 1353 {
		t.Errorf("%d entries over %d rows, want 2188 over 1353 (835 began and ended in one episode)", entries, len(doc.Procs))
	}
	for i, n := range refs {
		if n == 0 {
			t.Errorf("procs[%d] is referred to by no episode", i)
		}
	}
	rows := map[string]int{}
	for i, p := range doc.Procs {
		b, _ := json.Marshal(p)
		if j, dup := rows[string(b)]; dup {
			t.Errorf("procs[%d] repeats procs[%d]: %s", i, j, b)
		}
		rows[string(b)] = i
	}
	chains := map[string]int{}
	for i, a := range doc.Ancestries {
		k := strings.Join(a, "\x00")
		if j, dup := chains[k]; dup || len(a) == 0 {
			t.Errorf("ancestries[%d] %q repeats ancestries[%d] or is empty", i, a, j)
		}
		chains[k] = i
	}
	// The old shape, a copy of each process in each list with its chain,
	// was 1,319,305 bytes; the repetition gone, at most 0.55 of it is
	// left (649,594 bytes at this change).
	if len(raw) > 725_000 {
		t.Errorf("document is %d bytes, want <= 725000 (the old shape's 1319305 x 0.55)", len(raw))
	}
	if n := bytes.Count(raw, []byte(`"title"`)); n != len(doc.Catalogue) {
		t.Errorf(`"title" written %d times, want once per catalogue signal (%d)`, n, len(doc.Catalogue))
	}
}

// A row is shared by value: the process that began and ended in episode
// 0 is one row in both its lists; its exit seen again in episode 1 with
// other I/O is a second row; two processes with the same chain share it.
func TestJSONProcRowsByValue(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 6, 0, 0, 0, time.UTC)
	chain := []string{"job.sh 4100", "cron 1"}
	tr := correlate.ProcActivity{PID: 4200, PPID: 4100, Comm: "tr", Program: "tr", Cmdline: "tr a b", Started: true, Exited: true, StartedBy: chain}
	cut := correlate.ProcActivity{PID: 4201, PPID: 4100, Comm: "cut", Program: "cut", WriteBytes: 4096, Started: true, StartedBy: chain}
	cutLater := cut
	cutLater.Started, cutLater.Exited, cutLater.WriteBytes = false, true, 8192
	orphan := correlate.ProcActivity{PID: 4300, Comm: "dd", ReadBytes: 1}
	r := correlate.Result{Start: t0, End: t0.Add(time.Minute), Interval: time.Second, Episodes: []correlate.Episode{
		{Index: 0, Start: t0, End: t0.Add(5 * time.Second), Started: []correlate.ProcActivity{tr, cut}, Exited: []correlate.ProcActivity{tr}},
		{Index: 1, Start: t0.Add(30 * time.Second), End: t0.Add(35 * time.Second), Exited: []correlate.ProcActivity{cutLater, orphan}},
	}}
	_, doc := renderDoc(t, r)
	if got, want := [][]int{doc.Episodes[0].Started, doc.Episodes[0].Exited, doc.Episodes[1].Started, doc.Episodes[1].Exited},
		[][]int{{0, 1}, {0}, {}, {2, 3}}; !reflect.DeepEqual(got, want) {
		t.Errorf("episode lists %v, want %v", got, want)
	}
	if len(doc.Ancestries) != 1 || !slices.Equal(doc.Ancestries[0], chain) {
		t.Errorf("ancestries %q, want the one chain %q", doc.Ancestries, chain)
	}
	for i, want := range []correlate.ProcActivity{tr, cut, cutLater, orphan} {
		if got := doc.resolve(t, i); !reflect.DeepEqual(got, want) {
			t.Errorf("procs[%d] = %+v, want %+v", i, got, want)
		}
	}
	if doc.Procs[3].Ancestry != nil {
		t.Errorf("procs[3] (no recorded ancestor) has ancestry %d", *doc.Procs[3].Ancestry)
	}
}
