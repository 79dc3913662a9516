package chain

import (
	"errors"
	"fmt"
	"time"

	"github.com/cilium/ebpf"

	"github.com/memdiag/memdiag/record"
)

// batchRows is how many rows one BPF_MAP_LOOKUP_AND_DELETE_BATCH call
// reads: big enough for any hash bucket (the kernel wants a whole bucket
// per call), small enough to keep the buffers at ~60 KiB a map.
const batchRows = 1024

// scratch holds the drain buffers, reused every sample.
type scratch struct {
	addK  []chainAddKey
	evK   []chainEvictKey
	stK   []chainTaskKey
	rfK   []chainRefaultKey
	pages []chainPagesVal
	stV   []chainStallVal
}

// drain reads and deletes every row of m, calling fn for each. It uses
// BPF_MAP_LOOKUP_AND_DELETE_BATCH (Linux 5.6) and, where the kernel lacks
// it, iterates and then deletes what it read.
func drain[K, V any](m *ebpf.Map, batchOK *bool, keys *[]K, vals *[]V, fn func(*K, *V)) error {
	if *keys == nil {
		*keys, *vals = make([]K, batchRows), make([]V, batchRows)
	}
	if *batchOK {
		var cursor ebpf.MapBatchCursor
		for {
			n, err := m.BatchLookupAndDelete(&cursor, *keys, *vals, nil)
			for i := range n {
				fn(&(*keys)[i], &(*vals)[i])
			}
			if errors.Is(err, ebpf.ErrKeyNotExist) {
				return nil
			}
			if errors.Is(err, ebpf.ErrNotSupported) {
				*batchOK = false
				break
			}
			if err != nil {
				return fmt.Errorf("drain %s: %w", m.String(), err)
			}
		}
	}
	var k K
	var v V
	var read []K
	it := m.Iterate()
	for it.Next(&k, &v) {
		fn(&k, &v)
		read = append(read, k)
	}
	if err := it.Err(); err != nil {
		return fmt.Errorf("drain %s: %w", m.String(), err)
	}
	for i := range read {
		_ = m.Delete(&read[i])
	}
	return nil
}

func (c *Collector) drainAdds(ch *record.Chain) error {
	return drain(c.objs.Adds, &c.batchOK, &c.scratch.addK, &c.scratch.pages, func(k *chainAddKey, v *chainPagesVal) {
		ch.Adds = append(ch.Adds, record.ChainAdd{
			PID: int(k.Tgid), Comm: comm(v.Comm),
			Cgroup: c.v2.path(k.Cgroup), Memcg: c.mem.path(k.Memcg),
			Bytes: v.Pages * c.pageSize,
		})
	})
}

func (c *Collector) drainEvictions(ch *record.Chain) error {
	return drain(c.objs.Evicts, &c.batchOK, &c.scratch.evK, &c.scratch.pages, func(k *chainEvictKey, v *chainPagesVal) {
		ch.Evictions = append(ch.Evictions, record.ChainEviction{
			Memcg: c.mem.path(k.Memcg), Reclaimer: reclaimer(k.Kind),
			PID: int(k.Tgid), Comm: comm(v.Comm),
			Cgroup: c.v2.path(k.Cgroup), ReclMemcg: c.mem.path(k.ReclMemcg),
			Bytes: v.Pages * c.pageSize,
		})
	})
}

func (c *Collector) drainStalls(ch *record.Chain) error {
	return drain(c.objs.Stalls, &c.batchOK, &c.scratch.stK, &c.scratch.stV, func(k *chainTaskKey, v *chainStallVal) {
		ch.Stalls = append(ch.Stalls, record.ChainStall{
			PID: int(k.Tgid), Comm: comm(v.Comm),
			Cgroup: c.v2.path(k.Cgroup), Memcg: c.mem.path(k.Memcg),
			Direct: time.Duration(v.DirectNs), Limit: time.Duration(v.MemcgNs),
		})
	})
}

func (c *Collector) drainRefaults(ch *record.Chain) error {
	return drain(c.objs.Refaults, &c.batchOK, &c.scratch.rfK, &c.scratch.pages, func(k *chainRefaultKey, v *chainPagesVal) {
		ch.Refaults = append(ch.Refaults, record.ChainRefault{
			PID: int(k.Tgid), Comm: comm(v.Comm),
			Cgroup: c.v2.path(k.Cgroup), Memcg: c.mem.path(k.Memcg),
			Bytes: v.Pages * c.pageSize,
		})
	})
}
