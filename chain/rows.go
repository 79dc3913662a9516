package chain

import (
	"cmp"
	"slices"

	"github.com/memdiag/memdiag/record"
)

// Others is the Comm of the row that sums the rows past the cap (PID 0).
const Others = "(others)"

// capRows sorts rows with order (biggest first) and returns at most max
// rows: when there are more, the first max-1 and one row, others, into
// which fold has summed the rest (max <= 0: no cap).
func capRows[T any](rows []T, max int, order func(a, b T) int, others T, fold func(sum *T, r T)) []T {
	slices.SortFunc(rows, order)
	if max <= 0 || len(rows) <= max {
		return rows
	}
	for _, r := range rows[max-1:] {
		fold(&others, r)
	}
	return append(rows[:max-1], others)
}

// capAdds caps page-cache additions by bytes: the rest in one row with
// PID 0 and Comm Others.
func capAdds(rows []record.ChainAdd, max int) []record.ChainAdd {
	return capRows(rows, max, func(a, b record.ChainAdd) int {
		return cmp.Or(cmp.Compare(b.Bytes, a.Bytes), cmp.Compare(a.PID, b.PID),
			cmp.Compare(a.Cgroup, b.Cgroup), cmp.Compare(a.Memcg, b.Memcg))
	}, record.ChainAdd{Comm: Others}, func(o *record.ChainAdd, r record.ChainAdd) { o.Bytes += r.Bytes })
}

// capEvictions is capAdds for evictions.
func capEvictions(rows []record.ChainEviction, max int) []record.ChainEviction {
	return capRows(rows, max, func(a, b record.ChainEviction) int {
		return cmp.Or(cmp.Compare(b.Bytes, a.Bytes), cmp.Compare(a.Memcg, b.Memcg),
			cmp.Compare(a.Reclaimer, b.Reclaimer), cmp.Compare(a.PID, b.PID),
			cmp.Compare(a.Cgroup, b.Cgroup), cmp.Compare(a.ReclMemcg, b.ReclMemcg))
	}, record.ChainEviction{Comm: Others}, func(o *record.ChainEviction, r record.ChainEviction) { o.Bytes += r.Bytes })
}

// capStalls caps stalls by direct plus memcg reclaim time, longest first.
func capStalls(rows []record.ChainStall, max int) []record.ChainStall {
	return capRows(rows, max, func(a, b record.ChainStall) int {
		return cmp.Or(cmp.Compare(b.Direct+b.Limit, a.Direct+a.Limit), cmp.Compare(a.PID, b.PID),
			cmp.Compare(a.Cgroup, b.Cgroup), cmp.Compare(a.Memcg, b.Memcg))
	}, record.ChainStall{Comm: Others}, func(o *record.ChainStall, r record.ChainStall) {
		o.Direct += r.Direct
		o.Limit += r.Limit
	})
}

// capRefaults is capAdds for refaults.
func capRefaults(rows []record.ChainRefault, max int) []record.ChainRefault {
	return capRows(rows, max, func(a, b record.ChainRefault) int {
		return cmp.Or(cmp.Compare(b.Bytes, a.Bytes), cmp.Compare(a.PID, b.PID),
			cmp.Compare(a.Cgroup, b.Cgroup), cmp.Compare(a.Memcg, b.Memcg))
	}, record.ChainRefault{Comm: Others}, func(o *record.ChainRefault, r record.ChainRefault) { o.Bytes += r.Bytes })
}
