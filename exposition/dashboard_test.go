package exposition

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/memdiag/memdiag/internal/testenv"
	"github.com/memdiag/memdiag/process"
	"github.com/memdiag/memdiag/record"
)

// TestGrafanaDashboard checks contrib/grafana/memdiag-fleet.json: every
// memdiag metric its queries name is one the exposition serves, and every
// query (panels and annotations) is valid PromQL to promtool, with
// Grafana's variables put in as a dashboard would.
func TestGrafanaDashboard(t *testing.T) {
	b, err := os.ReadFile("../contrib/grafana/memdiag-fleet.json")
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
		Annotations struct {
			List []struct {
				Name string `json:"name"`
				Expr string `json:"expr"`
			} `json:"list"`
		} `json:"annotations"`
	}
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatalf("dashboard JSON: %v", err)
	}
	var exprs []string
	for _, p := range d.Panels {
		for _, tg := range p.Targets {
			exprs = append(exprs, tg.Expr)
		}
	}
	firings := false
	for _, a := range d.Annotations.List {
		if a.Expr != "" {
			exprs = append(exprs, a.Expr)
			firings = firings || strings.Contains(a.Expr, JobLastFiring)
		}
	}
	if !firings {
		t.Errorf("no annotation marks job firings (%s)", JobLastFiring)
	}

	// The names a real exporter serves: a real recording with a cgroup,
	// the union fixture's jobs, episodes and culprits, and unit I/O.
	served := map[string]bool{}
	for _, path := range []string{"../record/testdata/v1/watch-6.18-cgroup.jsonl", "../correlate/testdata/union.jsonl.gz"} {
		rec, err := record.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		e := New(rec.Header, Options{AnalyzeEvery: 1})
		for i := range rec.Samples {
			e.Observe(&rec.Samples[i])
		}
		e.Observe(&record.Sample{Time: rec.Samples[len(rec.Samples)-1].Time, Onsets: []record.StallOnset{{Scope: "host", Resource: "memory", Kind: "some"}},
			Events: []record.Event{{Kind: process.Exit, PID: 1, Unit: "a.service", ReadBytes: 1}}})
		e.an.settle() // every sample analysed, the last one too
		_, fams := scrape(t, e)
		for n := range fams {
			served[n] = true
		}
	}
	name := regexp.MustCompile(`\bmemdiag_[a-z_]+`)
	for _, ex := range exprs {
		for _, n := range name.FindAllString(ex, -1) {
			if !served[n] {
				t.Errorf("the dashboard queries %s, which the exposition does not serve (%s)", n, ex)
			}
		}
	}

	path, err := exec.LookPath("promtool")
	if err != nil {
		testenv.Unmet(t, "promtool is not installed (apt-get install prometheus)")
		return
	}
	var rules strings.Builder
	rules.WriteString("groups:\n- name: dashboard\n  rules:\n")
	for i, ex := range exprs {
		ex = strings.NewReplacer("$__rate_interval", "1m", "$instance", ".*").Replace(ex)
		q, _ := json.Marshal(ex)
		rules.WriteString("  - record: dashboard:q" + string(rune('a'+i)) + "\n    expr: " + string(q) + "\n")
	}
	f := filepath.Join(t.TempDir(), "rules.yml")
	if err := os.WriteFile(f, []byte(rules.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(path, "check", "rules", f).CombinedOutput(); err != nil {
		t.Errorf("promtool check rules on the dashboard's queries: %v\n%s\n%s", err, out, rules.String())
	}
}
