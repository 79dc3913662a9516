package memstate

import (
	"fmt"
	"strconv"
	"strings"
)

// finish converts the report's task table with the page size, sets
// AtKill and writes the Cause.
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
	k.Cause = cause(k)
}

func indexOf(s []string, x string) int {
	for i, v := range s {
		if v == x {
			return i
		}
	}
	return -1
}

func ptr(v uint64) *uint64 { return &v }

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
					return ptr(sum[key])
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
		m.AnonBytes, m.FileBytes, m.ShmemBytes, m.DirtyBytes = ptr(p.node[0]), ptr(p.node[1]+p.node[2]), ptr(p.node[2]), ptr(p.node[3])
	}
	if p.ramP != nil {
		m.RAMBytes = ptr(sub(*p.ramP, p.reservedP) * k.PageSizeBytes)
	}
	return m
}

// cause writes the one line: what filled the memory that ran out.
func cause(k *OOMKill) string {
	m := k.AtKill
	where := "the host"
	var total uint64
	totalName := "RAM"
	switch k.Constraint {
	case "memcg":
		where = k.OOMCgroup
		if where == "" {
			where = k.TaskCgroup
		}
		if where == "" && len(k.CgroupStats) > 0 {
			where = k.CgroupStats[0].Path
		}
		if where == "" {
			where = "a cgroup"
		}
		total, totalName = k.CgroupLimitBytes, "limit"
	case "cpuset":
		where = "cpuset " + k.Cpuset + " (mems_allowed=" + k.MemsAllowed + ")"
	case "mempolicy":
		where = "a memory policy's nodes"
	}
	if m == nil || m.AnonBytes == nil {
		in := "in " + where
		switch {
		case k.Constraint == "":
			in = "(what ran out is not in the log)"
		case where == "the host":
			in = "of the host"
		}
		return fmt.Sprintf("%s OOM %s: the report holds no memory breakdown (only the victim's own anon-rss %s, file-rss %s, shmem-rss %s)",
			orWord(k.Constraint, "an"), in, FormatBytes(k.AnonRSSBytes), FormatBytes(k.FileRSSBytes), FormatBytes(k.ShmemRSSBytes))
	}
	if m.RAMBytes != nil {
		total = *m.RAMBytes
	}
	anon, file, shmem := *m.AnonBytes, deref(m.FileBytes), deref(m.ShmemBytes)
	cache := sub(file, shmem)
	var kern uint64
	switch {
	case m.KernelBytes != nil:
		kern = *m.KernelBytes
	case k.Constraint == "memcg" && k.CgroupUsageBytes > anon+file:
		kern = k.CgroupUsageBytes - anon - file
	}
	// amount: "255.0 MiB of 256.0 MiB anon" for a group, "anon 151.1 MiB of
	// 653.7 MiB RAM" for the host.
	amount := func(v uint64, word string) string {
		switch {
		case total == 0:
			return FormatBytes(v) + " " + word
		case totalName == "limit":
			return FormatBytes(v) + " of " + FormatBytes(total) + " " + word
		}
		return word + " " + FormatBytes(v) + " of " + FormatBytes(total) + " " + totalName
	}
	shmemText := "shmem " + FormatBytes(shmem)
	if m.ShmemBytes == nil {
		shmemText = "shmem not in the report"
	}
	cacheText := fmt.Sprintf("%s cache left", FormatBytes(cache))
	if cache < 1<<20 || (total > 0 && cache*100 < total) {
		cacheText = "no cache left"
	}
	swap := swapText(k)
	in := "in " + where
	if where == "the host" {
		in = "of the host"
	}
	switch {
	case shmem >= anon && shmem >= cache && shmem >= kern:
		return fmt.Sprintf("shmem-filled %s: %s (tmpfs, shared memory: only swap can take it), anon %s, %s, %s", where, amount(shmem, "shmem"), FormatBytes(anon), cacheText, swap)
	case anon >= cache && anon >= kern:
		return fmt.Sprintf("anon overrun %s: %s, %s, %s, %s", in, amount(anon, "anon"), shmemText, cacheText, swap)
	case kern >= cache:
		return fmt.Sprintf("kernel memory %s: %s (slab, stacks, page tables), anon %s, %s, %s", in, amount(kern, "kernel"), FormatBytes(anon), shmemText, swap)
	}
	return fmt.Sprintf("page cache not reclaimed %s: %s (%s dirty), anon %s, %s, %s", in, amount(cache, "cache"), FormatBytes(deref(m.DirtyBytes)), FormatBytes(anon), shmemText, swap)
}

func orWord(s, def string) string {
	if s == "" {
		return def
	}
	return "a " + s
}

// swapText says whether swap could have taken more.
func swapText(k *OOMKill) string {
	m := k.AtKill
	if k.Constraint != "memcg" {
		switch {
		case m.SwapTotalBytes != nil && *m.SwapTotalBytes == 0:
			return "no swap"
		case m.SwapFreeBytes != nil && *m.SwapFreeBytes == 0:
			return "swap full"
		case m.SwapFreeBytes != nil:
			return FormatBytes(*m.SwapFreeBytes) + " of swap free"
		}
		return "swap not in the report"
	}
	u, l := k.CgroupSwapUsageBytes, k.CgroupSwapLimitBytes
	switch k.CgroupSwapCounter {
	case "memory+swap":
		switch {
		case l != nil && *l <= k.CgroupLimitBytes:
			return "no swap allowed (memory+swap limit = memory limit)"
		case l != nil && u != nil && *u >= *l:
			return "swap full (memory+swap at its limit)"
		case l != nil && u != nil:
			return FormatBytes(*l-*u) + " of swap allowed left (the host's swap is not in a memcg report)"
		}
		if m.SwapBytes != nil {
			// What the group had pushed to swap; a memcg report does not
			// print the host's swap, so whether it was full is unknown.
			return FormatBytes(*m.SwapBytes) + " in swap, the group's swap not limited (the host's free swap is not in a memcg report)"
		}
		return "swap not limited for the group (the host's swap is not in a memcg report)"
	case "swap":
		switch {
		case l != nil && *l == 0:
			return "no swap allowed (memory.swap.max 0)"
		case l != nil && u != nil && *u >= *l:
			return "swap full (at memory.swap.max)"
		case u != nil:
			return FormatBytes(*u) + " in swap (the host's swap is not in a memcg report)"
		}
	}
	if m.SwapBytes != nil {
		return FormatBytes(*m.SwapBytes) + " in swap (the swap limit is not in the report)"
	}
	return "swap not in the report"
}
