package chain

import (
	"context"
	"testing"

	"github.com/memdiag/memdiag/internal/testenv"
	"github.com/memdiag/memdiag/record"
)

// BenchmarkFill measures one sample's drain of N rows in each of the
// adds, evictions, stalls and refaults maps (the programs attached, the
// rows written from user space before each Fill, untimed).
func BenchmarkFill(b *testing.B) {
	testenv.RequireRoot(b, "loading eBPF programs")
	for _, n := range []int{64, 1024, 8192} {
		b.Run(itoa(uint64(n)), func(b *testing.B) {
			c, err := Open(Options{})
			if err != nil {
				b.Skip(err)
			}
			defer c.Close()
			root := uint64(1) // "/" in both hierarchies
			ctx := context.Background()
			var s record.Sample
			for b.Loop() {
				b.StopTimer()
				for i := range n {
					v := chainPagesVal{Pages: uint64(i + 1)}
					_ = c.objs.Adds.Put(chainAddKey{Tgid: uint32(1e6 + i), Cgroup: root, Memcg: root}, v)
					_ = c.objs.Evicts.Put(chainEvictKey{Memcg: root, Kind: 1, Tgid: uint32(1e6 + i), Cgroup: root, ReclMemcg: root}, v)
					_ = c.objs.Stalls.Put(chainTaskKey{Tgid: uint32(1e6 + i), Cgroup: root, Memcg: root}, chainStallVal{DirectNs: uint64(i)})
					_ = c.objs.Refaults.Put(chainRefaultKey{Memcg: root, Tgid: uint32(1e6 + i), Cgroup: root}, v)
				}
				b.StartTimer()
				if err := c.Fill(ctx, &s); err != nil {
					b.Fatal(err)
				}
				if len(s.Chain.Adds) < min(n, DefaultMaxRows) {
					b.Fatalf("%d adds, want >= %d", len(s.Chain.Adds), min(n, DefaultMaxRows))
				}
			}
		})
	}
}
