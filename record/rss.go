package record

import "github.com/memdiag/memdiag/memstate"

// RSSSamples extracts the per-process RSS of each sample, for
// memstate.Growth (steady anon growth: leak or allocator retention).
// Samples without RSS (recorded without it, or by an older memdiag) are
// skipped.
func RSSSamples(ss []Sample) []memstate.RSSSample {
	var out []memstate.RSSSample
	for _, s := range ss {
		if len(s.RSS) > 0 {
			out = append(out, memstate.RSSSample{Time: s.Time, Procs: s.RSS})
		}
	}
	return out
}
