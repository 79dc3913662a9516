package chain

import (
	"cmp"
	"slices"

	"github.com/memdiag/memdiag/record"
)

// Others is the Comm of the row that sums the rows past the cap (PID 0).
const Others = "(others)"

// capAdds sorts rows by bytes, biggest first, and returns at most max
// rows: when there are more, the first max-1 and one row with PID 0 and
// Comm Others summing the rest (max <= 0: no cap).
func capAdds(rows []record.ChainAdd, max int) []record.ChainAdd {
	slices.SortFunc(rows, func(a, b record.ChainAdd) int {
		return cmp.Or(cmp.Compare(b.Bytes, a.Bytes), cmp.Compare(a.PID, b.PID),
			cmp.Compare(a.Cgroup, b.Cgroup), cmp.Compare(a.Memcg, b.Memcg))
	})
	if max <= 0 || len(rows) <= max {
		return rows
	}
	o := record.ChainAdd{Comm: Others}
	for _, r := range rows[max-1:] {
		o.Bytes += r.Bytes
	}
	return append(rows[:max-1], o)
}

// capEvictions is capAdds for evictions.
func capEvictions(rows []record.ChainEviction, max int) []record.ChainEviction {
	slices.SortFunc(rows, func(a, b record.ChainEviction) int {
		return cmp.Or(cmp.Compare(b.Bytes, a.Bytes), cmp.Compare(a.Memcg, b.Memcg),
			cmp.Compare(a.Reclaimer, b.Reclaimer), cmp.Compare(a.PID, b.PID),
			cmp.Compare(a.Cgroup, b.Cgroup), cmp.Compare(a.ReclMemcg, b.ReclMemcg))
	})
	if max <= 0 || len(rows) <= max {
		return rows
	}
	o := record.ChainEviction{Comm: Others}
	for _, r := range rows[max-1:] {
		o.Bytes += r.Bytes
	}
	return append(rows[:max-1], o)
}

// capStalls sorts rows by direct plus memcg reclaim time, longest first,
// and caps them like capAdds.
func capStalls(rows []record.ChainStall, max int) []record.ChainStall {
	slices.SortFunc(rows, func(a, b record.ChainStall) int {
		return cmp.Or(cmp.Compare(b.Direct+b.Limit, a.Direct+a.Limit), cmp.Compare(a.PID, b.PID),
			cmp.Compare(a.Cgroup, b.Cgroup), cmp.Compare(a.Memcg, b.Memcg))
	})
	if max <= 0 || len(rows) <= max {
		return rows
	}
	o := record.ChainStall{Comm: Others}
	for _, r := range rows[max-1:] {
		o.Direct += r.Direct
		o.Limit += r.Limit
	}
	return append(rows[:max-1], o)
}

// capRefaults is capAdds for refaults.
func capRefaults(rows []record.ChainRefault, max int) []record.ChainRefault {
	slices.SortFunc(rows, func(a, b record.ChainRefault) int {
		return cmp.Or(cmp.Compare(b.Bytes, a.Bytes), cmp.Compare(a.PID, b.PID),
			cmp.Compare(a.Cgroup, b.Cgroup), cmp.Compare(a.Memcg, b.Memcg))
	})
	if max <= 0 || len(rows) <= max {
		return rows
	}
	o := record.ChainRefault{Comm: Others}
	for _, r := range rows[max-1:] {
		o.Bytes += r.Bytes
	}
	return append(rows[:max-1], o)
}
