package cmd

import "github.com/memdiag/memdiag/analysis"

// redactSource is r redacted as it is read (analysis.Redacted), unless
// keep (--no-redact).
func redactSource(r analysis.Source, keep bool) analysis.Source {
	if keep {
		return r
	}
	return analysis.Redacted(r)
}
