package gate

import (
	"context"
	"errors"
	"path/filepath"
	"strings"

	"github.com/memdiag/memdiag/internal/hostenv"
	"github.com/memdiag/memdiag/psi"
)

// EnvDetail adds the kernel's reasons (psi.UnavailableError with a hint)
// for the PSI resources the thresholds need to a preflight failure.
func EnvDetail(ctx context.Context, c *psi.Collector, scope Scope, ths []*Threshold, err error) error {
	var missing []error
	if scope.Cgroup != "" {
		_, missing, _, _ = c.CollectCgroup(ctx)
	} else {
		_, missing, _ = c.Collect(ctx)
	}
	need := map[string]bool{}
	for _, t := range ths {
		if t.Metric.Resource != "" {
			need[t.Metric.Resource] = true
		}
	}
	msgs := []string{err.Error()}
	for _, m := range missing {
		var ue *psi.UnavailableError
		if errors.As(m, &ue) && need[strings.TrimSuffix(filepath.Base(ue.Path), ".pressure")] {
			msgs = append(msgs, m.Error())
		}
	}
	return &hostenv.Unavailable{Need: strings.Join(msgs, "\n"), Err: err}
}
