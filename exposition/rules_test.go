package exposition

import (
	"os"
	"os/exec"
	"regexp"
	"testing"

	"github.com/memdiag/memdiag/internal/testenv"
)

// TestAlertingRules checks contrib/prometheus/memdiag-alerts.yml: every
// memdiag_ metric it reads is one the exposition serves, and promtool
// accepts the rules and passes their unit tests (memdiag-alerts.test.yml:
// a job whose last 3 firings stalled memory fires within 5 minutes).
func TestAlertingRules(t *testing.T) {
	const dir = "../contrib/prometheus"
	src, err := os.ReadFile(dir + "/memdiag-alerts.yml")
	if err != nil {
		t.Fatal(err)
	}
	served := map[string]bool{JobNextFiring: true, JobStallRatio: true, JobRecentFirings: true, JobStallStreak: true}
	for _, m := range regexp.MustCompile(`memdiag_[a-z_]+`).FindAllString(string(src), -1) {
		if !served[m] {
			t.Errorf("the rules read %s, which the exposition does not serve", m)
		}
	}
	path, err := exec.LookPath("promtool")
	if err != nil {
		testenv.Unmet(t, "promtool is not installed (apt-get install prometheus)")
		return
	}
	for _, args := range [][]string{{"check", "rules", "memdiag-alerts.yml"}, {"test", "rules", "memdiag-alerts.test.yml"}} {
		cmd := exec.Command(path, args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("promtool %v: %v\n%s", args, err, out)
		}
	}
}
