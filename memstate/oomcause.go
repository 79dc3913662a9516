package memstate

import (
	"strconv"
	"strings"
)

// finish converts the report's task table with the page size, sets
// AtKill.
func finish(k *OOMKill, p *oomReport, defPage uint64) {
	// The page size: the victim's row (pages) against its kill line (kB),
	// both printed at the kill from the same counters.
	k.PageSizeBytes, k.PageSizeFrom = defPage, "given"
	if defPage == 0 {
		k.PageSizeBytes, k.PageSizeFrom = 4096, "assumed (4 KiB): the report does not tell"
	}
	rssCol := indexOf(p.taskCols, "rss")
	for _, row := range p.tasks {
		if pid, _ := strconv.Atoi(row[0]); pid == k.PID && rssCol >= 0 {
			pages, _ := strconv.ParseUint(row[1+rssCol], 10, 64)
			b := k.AnonRSSBytes + k.FileRSSBytes + k.ShmemRSSBytes
			if pages > 0 && b%pages == 0 {
				if ps := b / pages; ps >= 4096 && ps <= 1<<16 && ps&(ps-1) == 0 {
					k.PageSizeBytes, k.PageSizeFrom = ps, "the victim's rss pages in the task table against its anon+file+shmem-rss"
				}
			}
		}
	}
	ps := k.PageSizeBytes
	for _, row := range p.tasks {
		t := OOMTask{Name: row[len(row)-1]}
		t.PID, _ = strconv.Atoi(row[0])
		t.Victim = t.PID == k.PID
		for i, c := range p.taskCols[:len(p.taskCols)-1] {
			v, err := strconv.ParseInt(row[1+i], 10, 64)
			if err != nil {
				continue
			}
			u := uint64(max(v, 0))
			pg := u * ps
			switch c {
			case "uid":
				t.UID = int(v)
			case "tgid":
				t.TGID = int(v)
			case "total_vm":
				t.TotalVMBytes = pg
			case "rss":
				t.RSSBytes = pg
			case "rss_anon":
				t.RSSAnonBytes = &pg
			case "rss_file":
				t.RSSFileBytes = &pg
			case "rss_shmem":
				t.RSSShmemBytes = &pg
			case "pgtables_bytes":
				t.PageTablesBytes = u
			case "nr_ptes":
				t.PageTablesBytes = pg
			case "swapents":
				t.SwapBytes = pg
			case "oom_score_adj":
				t.OOMScoreAdj = int(v)
			}
		}
		k.Tasks = append(k.Tasks, t)
	}
	k.AtKill = atKill(k, p)
}

func indexOf(s []string, x string) int {
	for i, v := range s {
		if v == x {
			return i
		}
	}
	return -1
}

// atKill reads what the memory that ran out held: a memcg's stats (the
// hierarchical total_* of 5.x+ v1, v2's own figures, or 4.x's one line per
// group of the subtree summed), or the host's Mem-Info.
func atKill(k *OOMKill, p *oomReport) *OOMMemory {
	if k.Constraint == "memcg" {
		if len(p.stats) == 0 {
			if p.kmem == nil {
				return nil
			}
			return &OOMMemory{KernelBytes: p.kmem}
		}
		sum := map[string]uint64{}
		has := map[string]bool{}
		_, total := p.stats[0].Values["total_rss"]
		_, v2 := p.stats[0].Values["anon"]
		for i, st := range p.stats {
			if i > 0 && (total || v2) {
				break // one hierarchical block
			}
			for key, v := range st.Values {
				if total {
					if !strings.HasPrefix(key, "total_") {
						continue
					}
					key = strings.TrimPrefix(key, "total_")
				}
				sum[key] += v
				has[key] = true
			}
		}
		get := func(keys ...string) *uint64 {
			for _, key := range keys {
				if has[key] {
					return new(sum[key])
				}
			}
			return nil
		}
		m := &OOMMemory{
			AnonBytes: get("anon", "rss"), FileBytes: get("file", "cache"), ShmemBytes: get("shmem"),
			DirtyBytes: get("file_dirty", "dirty"), KernelBytes: get("kernel"), SwapBytes: get("swap"),
		}
		if m.KernelBytes == nil {
			m.KernelBytes = p.kmem
		}
		if m.SwapBytes == nil && p.swapCounter == "swap" {
			m.SwapBytes = p.swapUsage
		}
		return m
	}
	if p.node == nil && p.swapFree == nil && p.ramP == nil {
		return nil
	}
	m := &OOMMemory{SwapFreeBytes: p.swapFree, SwapTotalBytes: p.swapTot}
	if p.node != nil {
		m.AnonBytes, m.FileBytes, m.ShmemBytes, m.DirtyBytes = new(p.node[0]), new(p.node[1]+p.node[2]), new(p.node[2]), new(p.node[3])
	}
	if p.ramP != nil {
		m.RAMBytes = new(sub(*p.ramP, p.reservedP) * k.PageSizeBytes)
	}
	return m
}
