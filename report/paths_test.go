package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/memdiag/memdiag/correlate"
	"github.com/memdiag/memdiag/internal/format"
	"github.com/memdiag/memdiag/timers"
)

// A cron culprit whose two processes each carry a started_by chain (the
// trial's cron.d/s6-report:2): the file is written as the user finds it,
// with its leading "/", in the evidence and the advice, and the two
// chains are set apart by a semicolon, not run together with commas.
func TestCronCulpritPathsAndChains(t *testing.T) {
	r := reference()
	job := &timers.Job{Name: "cron.d/s6-report:2", Source: timers.Cron, File: "etc/cron.d/s6-report", Line: 2,
		Schedule: []string{"* * * * *"}, Command: "/var/tmp/s6/s6report.sh", Active: true}
	r.Culprits = []correlate.Culprit{{Rank: 1, Name: job.Name, Kind: correlate.KindCron, Job: job, Episodes: []int{1, 3},
		EpisodesExplained: 2, EpisodesTotal: 4, BytesPerEpisode: 400 * mib, Confidence: 0.38,
		Processes: []correlate.ProcActivity{
			{Comm: "md5sum", ReadBytes: 400 * mib, StartedBy: []string{"s6report.sh 10641", "sh 10634", "s6crond.sh 9014"}},
			{Comm: "s6report.sh", StartedBy: []string{"sh 10634", "s6crond.sh 9014"}},
		}}}
	var b bytes.Buffer
	if err := Render(&b, r, format.Table, Options{}); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"defined in /etc/cron.d/s6-report:2",
		"comment out /etc/cron.d/s6-report:2 for one test run",
		// sh 10634's own starter is said once (issue 31.2)
		"Its processes (md5sum, started by s6report.sh 10641, which sh 10634 started, which s6crond.sh 9014 started; s6report.sh, started by sh 10634) did",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, " etc/cron.d") {
		t.Errorf("a path without its leading /:\n%s", out)
	}
}

// An episode that raised psi_full but not psi_some (trial s6 run D,
// episode 0: full 1.52 %, some 1.6 % under its threshold) gives its some
// peak in the CSV, never a blank that reads as 0 beside a non-zero full.
func TestCSVStallBesideRaisedFull(t *testing.T) {
	r := reference()
	r.Episodes = r.Episodes[:1]
	r.Episodes[0].Signals = []correlate.SignalPeak{{Signal: correlate.PSIFull, Peak: 0.0152}}
	r.Episodes[0].Stall = []float64{0.016, 0.0152}
	var b bytes.Buffer
	if err := Render(&b, r, format.CSV, Options{}); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(b.String(), "\n")
	hdr, row := strings.Split(lines[0], ","), strings.Split(lines[1], ",")
	for i, col := range hdr {
		want := map[string]string{"psi_some_share": "0.016", "psi_full_share": "0.0152", "lru_drop_bytes_per_s": ""}[col]
		if _, ok := map[string]bool{"psi_some_share": true, "psi_full_share": true, "lru_drop_bytes_per_s": true}[col]; ok && row[i] != want {
			t.Errorf("%s = %q, want %q:\n%s", col, row[i], want, b.String())
		}
	}
}

// TestProcessesTextAncestryOnce: the new-user trial's cron job (issue 31,
// item 2) whose four processes each repeated "started by
// nightly-export.sh 31737, which sh 31736 started, which CRON 31729
// started, which cron 19883 started": the chain is said once for the
// processes that share it.
func TestProcessesTextAncestryOnce(t *testing.T) {
	chain := []string{"nightly-export.sh 31737", "sh 31736", "CRON 31729", "cron 19883"}
	var ps []correlate.ProcActivity
	for _, c := range []string{"python3", "dd", "gzip", "tar"} {
		ps = append(ps, correlate.ProcActivity{Comm: c, StartedBy: chain})
	}
	ps = append(ps, correlate.ProcActivity{Comm: "nightly-export.sh", StartedBy: chain[1:]})
	names, sep := processesText(ps)
	got := strings.Join(names, sep)
	want := "python3, dd, gzip, tar, started by nightly-export.sh 31737, which sh 31736 started, which CRON 31729 started, which cron 19883 started; nightly-export.sh, started by sh 31736"
	if got != want {
		t.Errorf("processesText = %q\nwant            %q", got, want)
	}
	if names, sep := processesText([]correlate.ProcActivity{{Comm: "postgres"}, {Comm: "pg_dump"}}); strings.Join(names, sep) != "postgres, pg_dump" {
		t.Errorf("no chains: %q", strings.Join(names, sep))
	}
}
