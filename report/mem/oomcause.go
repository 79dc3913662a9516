package mem

import (
	"fmt"

	"github.com/memdiag/memdiag/memstate"
	"github.com/memdiag/memdiag/units"
)

// oomCause writes the one line: what filled the memory that ran out.
func oomCause(k *memstate.OOMKill) string {
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
			orWord(k.Constraint, "an"), in, units.FormatBytes(k.AnonRSSBytes), units.FormatBytes(k.FileRSSBytes), units.FormatBytes(k.ShmemRSSBytes))
	}
	if m.RAMBytes != nil {
		total = *m.RAMBytes
	}
	anon, file, shmem := *m.AnonBytes, derefBytes(m.FileBytes), derefBytes(m.ShmemBytes)
	cache := subBytes(file, shmem)
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
			return units.FormatBytes(v) + " " + word
		case totalName == "limit":
			return units.FormatBytes(v) + " of " + units.FormatBytes(total) + " " + word
		}
		return word + " " + units.FormatBytes(v) + " of " + units.FormatBytes(total) + " " + totalName
	}
	shmemText := "shmem " + units.FormatBytes(shmem)
	if m.ShmemBytes == nil {
		shmemText = "shmem not in the report"
	}
	cacheText := fmt.Sprintf("%s cache left", units.FormatBytes(cache))
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
		return fmt.Sprintf("shmem-filled %s: %s (tmpfs, shared memory: only swap can take it), anon %s, %s, %s", where, amount(shmem, "shmem"), units.FormatBytes(anon), cacheText, swap)
	case anon >= cache && anon >= kern:
		return fmt.Sprintf("anon overrun %s: %s, %s, %s, %s", in, amount(anon, "anon"), shmemText, cacheText, swap)
	case kern >= cache:
		return fmt.Sprintf("kernel memory %s: %s (slab, stacks, page tables), anon %s, %s, %s", in, amount(kern, "kernel"), units.FormatBytes(anon), shmemText, swap)
	}
	return fmt.Sprintf("page cache not reclaimed %s: %s (%s dirty), anon %s, %s, %s", in, amount(cache, "cache"), units.FormatBytes(derefBytes(m.DirtyBytes)), units.FormatBytes(anon), shmemText, swap)
}

func orWord(s, def string) string {
	if s == "" {
		return def
	}
	return "a " + s
}

// swapText says whether swap could have taken more.
func swapText(k *memstate.OOMKill) string {
	m := k.AtKill
	if k.Constraint != "memcg" {
		switch {
		case m.SwapTotalBytes != nil && *m.SwapTotalBytes == 0:
			return "no swap"
		case m.SwapFreeBytes != nil && *m.SwapFreeBytes == 0:
			return "swap full"
		case m.SwapFreeBytes != nil:
			return units.FormatBytes(*m.SwapFreeBytes) + " of swap free"
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
			return units.FormatBytes(*l-*u) + " of swap allowed left (the host's swap is not in a memcg report)"
		}
		if m.SwapBytes != nil {
			// What the group had pushed to swap; a memcg report does not
			// print the host's swap, so whether it was full is unknown.
			return units.FormatBytes(*m.SwapBytes) + " in swap, the group's swap not limited (the host's free swap is not in a memcg report)"
		}
		return "swap not limited for the group (the host's swap is not in a memcg report)"
	case "swap":
		switch {
		case l != nil && *l == 0:
			return "no swap allowed (memory.swap.max 0)"
		case l != nil && u != nil && *u >= *l:
			return "swap full (at memory.swap.max)"
		case u != nil:
			return units.FormatBytes(*u) + " in swap (the host's swap is not in a memcg report)"
		}
	}
	if m.SwapBytes != nil {
		return units.FormatBytes(*m.SwapBytes) + " in swap (the swap limit is not in the report)"
	}
	return "swap not in the report"
}

// derefBytes is *p, 0 for nil.
func derefBytes(p *uint64) uint64 {
	if p == nil {
		return 0
	}
	return *p
}

// subBytes is a − b, 0 when b > a.
func subBytes(a, b uint64) uint64 {
	if b > a {
		return 0
	}
	return a - b
}
