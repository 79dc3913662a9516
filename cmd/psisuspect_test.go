package cmd

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The two suspect-PSI recordings (testdata/psi-suspect/SOURCE: real
// recordings with their PSI edited) and real ones that must not be
// flagged.
const (
	suspectAvg   = "../testdata/psi-suspect/avg99-total-frozen.jsonl.gz"
	suspectStall = "../testdata/psi-suspect/stall96-counters-frozen.jsonl.gz"
	realCalm     = "../correlate/testdata/real/trial-s8-tenant.jsonl.gz" // ≤ 3 % memory stall
	realPressure = "../correlate/testdata/real/trial-s7-oom-v1.jsonl.gz" // up to 75 %, OOM kills
	suspectWord  = "suspect PSI (kernel 6.18.44-fc-v1098)"
)

func TestAnalyzeSaysSuspectPSI(t *testing.T) {
	for _, c := range []struct{ rec, want string }{
		{suspectAvg, "the host's memory some avg10 read 99 % at 10:54:33 while its total rose 0 % of the 21s before, which allows at most 37.7 %"},
		{suspectStall, "the host's memory some total says 96 % of 10:52:45–10:55:15 (2m30s) was stalled, yet none of 16 reclaim, refault, swap, major-fault and allocstall counters moved"},
	} {
		code, out, errOut := runCmd(t, "analyze", c.rec)
		if code != exitOK {
			t.Fatalf("%s: exit %d: %s", c.rec, code, errOut)
		}
		if !strings.Contains(out, "Note: "+suspectWord+": "+c.want) {
			t.Errorf("%s: text lacks %q:\n%s", c.rec, c.want, out)
		}
		code, out, errOut = runCmd(t, "analyze", c.rec, "--format", "json")
		if code != exitOK {
			t.Fatalf("%s json: exit %d: %s", c.rec, code, errOut)
		}
		var doc struct {
			Warnings       []string `json:"warnings"`
			WarningDetails []struct {
				Kind       string `json:"kind"`
				Kernel     string `json:"kernel"`
				SuspectPSI *struct {
					Kind       string  `json:"kind"`
					Resource   string  `json:"resource"`
					TotalShare float64 `json:"total_share_pct"`
				} `json:"suspect_psi"`
			} `json:"warning_details"`
		}
		if err := json.Unmarshal([]byte(out), &doc); err != nil {
			t.Fatal(err)
		}
		found := 0
		for i, w := range doc.WarningDetails {
			if w.Kind == "suspect_psi" {
				found++
				if w.Kernel != "6.18.44-fc-v1098" || w.SuspectPSI == nil || w.SuspectPSI.Resource != "memory" ||
					!strings.HasPrefix(doc.Warnings[i], suspectWord) {
					t.Errorf("%s: warning %d: %+v, %q", c.rec, i, w, doc.Warnings[i])
				}
			}
		}
		if found != 2 { // the host's and the group's
			t.Errorf("%s: %d suspect_psi warnings in JSON, want 2", c.rec, found)
		}
	}
	for _, rec := range []string{realCalm, realPressure} {
		_, out, _ := runCmd(t, "analyze", rec)
		if strings.Contains(out, "suspect PSI") {
			t.Errorf("%s: false alarm:\n%s", rec, out)
		}
	}
}

// gate says so in every format, and --suspect-psi decides what it does.
func TestGateSaysSuspectPSI(t *testing.T) {
	t.Setenv("GITHUB_STEP_SUMMARY", "")
	for _, c := range []struct {
		rec, th string
	}{
		{suspectAvg, "memory.some.avg10<10"},
		{suspectStall, "memory.some.stall<50%"},
	} {
		for _, f := range []string{"table", "json", "markdown", "github"} {
			junit := filepath.Join(t.TempDir(), "gate.xml")
			code, out, errOut := runCmd(t, "gate", "-t", c.th, "-t", "oom_kills==0", "--recording", c.rec, "-f", f, "--junit", junit)
			if code != exitBreach {
				t.Errorf("%s %s: exit %d, want %d (breach, judged as recorded): %s", c.rec, f, code, exitBreach, errOut)
			}
			if !strings.Contains(out, suspectWord) {
				t.Errorf("%s %s: no suspect-PSI warning:\n%s", c.rec, f, out)
			}
			if !strings.Contains(errOut, "the judged PSI is suspect") {
				t.Errorf("%s %s: stderr %q does not say the PSI is suspect", c.rec, f, errOut)
			}
			x, err := os.ReadFile(junit)
			if err != nil {
				t.Fatal(err)
			}
			if n := strings.Count(string(x), suspectWord); n < 2 { // the suite's system-err and the threshold's failure
				t.Errorf("%s junit: %d warnings:\n%s", c.rec, n, x)
			}
		}
		// fail: the thresholds on memory PSI are not judged, exit 5;
		// oom_kills is judged as usual.
		code, out, _ := runCmd(t, "gate", "-t", c.th, "-t", "oom_kills==0", "--recording", c.rec, "--suspect-psi", "fail", "-f", "json")
		if code != exitEnv {
			t.Errorf("%s --suspect-psi fail: exit %d, want %d", c.rec, code, exitEnv)
		}
		var doc struct {
			Action     string `json:"suspect_psi_action"`
			Thresholds []struct {
				Expr, Status, Reason string
			} `json:"thresholds"`
		}
		if err := json.Unmarshal([]byte(out), &doc); err != nil {
			t.Fatal(err)
		}
		if doc.Action != "fail" || len(doc.Thresholds) != 2 || doc.Thresholds[0].Status != "no data" ||
			!strings.Contains(doc.Thresholds[0].Reason, "the memory PSI contradicts itself") || doc.Thresholds[1].Status != "pass" {
			t.Errorf("%s --suspect-psi fail: %+v", c.rec, doc)
		}
		// ignore: no check, no word.
		_, out, _ = runCmd(t, "gate", "-t", c.th, "--recording", c.rec, "--suspect-psi", "ignore")
		if strings.Contains(out, "suspect PSI") {
			t.Errorf("%s --suspect-psi ignore still warns:\n%s", c.rec, out)
		}
	}
	for _, rec := range []string{realCalm, realPressure} {
		_, out, _ := runCmd(t, "gate", "-t", "memory.some.stall<50%", "--recording", rec, "-f", "json")
		if strings.Contains(out, "suspect PSI") || strings.Contains(out, `"suspect_psi":`) {
			t.Errorf("%s: false alarm:\n%s", rec, out)
		}
	}
	if code, _, errOut := runCmd(t, "gate", "-t", "memory.some.stall<5%", "--recording", realCalm, "--suspect-psi", "maybe"); code != exitUsage || !strings.Contains(errOut, "want warn, fail or ignore") {
		t.Errorf("--suspect-psi maybe: exit %d, %s", code, errOut)
	}
}

// mem: averages of 99 % on a kernel whose memory total never moved since
// boot, as the avg99 recording's; every format says so, with the kernel.
func TestMemSaysSuspectPSI(t *testing.T) {
	root := t.TempDir()
	if err := os.CopyFS(root, os.DirFS("../memstate/testdata/host618")); err != nil {
		t.Fatal(err)
	}
	for p, s := range map[string]string{
		"proc/pressure/memory":      "some avg10=99.00 avg60=99.00 avg300=99.00 total=0\nfull avg10=99.00 avg60=99.00 avg300=99.00 total=0\n",
		"proc/sys/kernel/osrelease": "6.18.44-fc-v1098\n",
	} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(root, p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, p), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want := suspectWord + ": the host's memory some avg10 read 99 % at "
	for _, f := range []string{"table", "markdown", "json", "csv"} {
		code, out, errOut := runMemdiag(t, root, "mem", "--interval", "0", "--format", f)
		if code != exitOK {
			t.Fatalf("%s: exit %d: %s", f, code, errOut)
		}
		if !strings.Contains(out, want) || !strings.Contains(out, "but its total since boot (or the group's creation) allows at most 22.1 %") {
			t.Errorf("%s: lacks the suspect-PSI warning:\n%s", f, out)
		}
	}
	// The fixture's own PSI (real, 6.18) is not suspect.
	_, out, _ := runMemdiag(t, "../memstate/testdata/host618", "mem", "--interval", "0")
	if strings.Contains(out, "suspect PSI") {
		t.Errorf("false alarm:\n%s", out)
	}
}
