package record

import "github.com/memdiag/memdiag/memview"

// RSSSamples extracts the per-process RSS of each sample, for
// memview.Growth (steady anon growth: leak or allocator retention).
// Samples without RSS (recorded without it, or by an older memdiag) are
// skipped.
func RSSSamples(ss []Sample) []memview.RSSSample {
	var out []memview.RSSSample
	for _, s := range ss {
		if len(s.RSS) > 0 {
			out = append(out, memview.RSSSample{Time: s.Time, Procs: s.RSS})
		}
	}
	return out
}
