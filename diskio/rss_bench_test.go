package diskio

import (
	"path/filepath"
	"testing"
	"time"
)

// BenchmarkScanRSS is what `watch` does each interval for memory at 1000
// processes: Scan, then TopRSS(10) (the top 10 by RSS, as before growers
// were followed) or RSS(10) (the top 10 and every growth candidate).
// Two trees alternate as in BenchmarkScanSynthetic; in b, 10 small
// processes stand 2 MiB above a, so from the first b scan on they are
// growth candidates (new high ≥ 1 MiB over their lowest) for GrowthIdle,
// longer than the benchmark: RSS reads their status too.
func BenchmarkScanRSS(b *testing.B) {
	const n = 1000
	dir := b.TempDir()
	ta, tb := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	for i := range n {
		pid := 1000 + i
		pages := uint64(1000 + i) // the largest have the highest PIDs
		writeRSSProc(b, ta, pid, pages)
		if i%100 == 0 {
			pages += 512
		}
		writeRSSProc(b, tb, pid, pages)
	}
	for _, c := range []struct {
		name string
		rss  func(s *ProcScanner) int
	}{
		{"TopRSS", func(s *ProcScanner) int { return len(s.TopRSS(10)) }},
		{"RSS", func(s *ProcScanner) int { r, _ := s.RSS(10); return len(r) }},
	} {
		b.Run(c.name, func(b *testing.B) {
			root, flip := alternating(b, b.TempDir(), ta, tb)
			s, err := NewProcScanner(root, ProcScanOptions{})
			if err != nil {
				b.Fatal(err)
			}
			now := time.Now()
			if _, _, _, err := s.Scan(now); err != nil {
				b.Fatal(err)
			}
			got := 0
			measureCPU(b, func() {
				flip()
				now = now.Add(time.Second)
				if _, _, _, err := s.Scan(now); err != nil {
					b.Fatal(err)
				}
				got = c.rss(s)
			})
			b.ReportMetric(float64(got), "recorded")
		})
	}
}
