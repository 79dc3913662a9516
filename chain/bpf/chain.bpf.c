// SPDX-License-Identifier: GPL-2.0
/*
 * chain.bpf.c: memdiag's page-cache chain, summed in kernel hash maps that
 * the Go loader (package chain) drains once per sample. No event reaches
 * user space on its own.
 *
 *   adds      tp_btf/mm_filemap_add_to_page_cache          pages by (tgid, cgroup v2, folio's memcg)
 *   evicts    tp_btf/mm_filemap_delete_from_page_cache     pages by (folio's memcg, reclaimer kind,
 *             (only while current is reclaiming)            tgid, cgroup v2, reclaimer's memcg)
 *   stalls    tp_btf/mm_vmscan_{direct,memcg}_reclaim_{begin,end}   ns by (tgid, cgroup v2, memcg)
 *   refaults  fentry/workingset_refault (file folios)      pages by (folio's memcg, tgid, cgroup v2)
 *   dropped   updates that found a map full
 *
 * Cgroups are kernfs node ids (the directory's inode number on 64-bit);
 * the loader turns them into paths.
 */
#include "kernel.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>

char LICENSE[] SEC("license") = "GPL";

#define MAX_ROWS 10240
#define TASK_COMM_LEN 16

enum reclaim_kind {
	RECLAIM_NONE = 0,
	RECLAIM_KSWAPD = 1,
	RECLAIM_DIRECT = 2,
	RECLAIM_MEMCG = 3,
};

struct add_key {
	__u32 tgid;
	__u32 pad;
	__u64 cgroup;
	__u64 memcg;
};

struct evict_key {
	__u64 memcg;
	__u32 kind;
	__u32 tgid;
	__u64 cgroup;
	__u64 recl_memcg;
};

struct task_key {
	__u32 tgid;
	__u32 pad;
	__u64 cgroup;
	__u64 memcg;
};

struct refault_key {
	__u64 memcg;
	__u32 tgid;
	__u32 pad;
	__u64 cgroup;
};

struct pages_val {
	__u64 pages;
	char comm[TASK_COMM_LEN];
};

struct stall_val {
	__u64 direct_ns;
	__u64 memcg_ns;
	char comm[TASK_COMM_LEN];
};

struct reclaim_state {
	__u64 start_ns;
	__u32 kind;
	__u32 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, MAX_ROWS);
	__type(key, struct add_key);
	__type(value, struct pages_val);
} adds SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, MAX_ROWS);
	__type(key, struct evict_key);
	__type(value, struct pages_val);
} evicts SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, MAX_ROWS);
	__type(key, struct task_key);
	__type(value, struct stall_val);
} stalls SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, MAX_ROWS);
	__type(key, struct refault_key);
	__type(value, struct pages_val);
} refaults SEC(".maps");

/* The thread (pid) in direct or memcg reclaim, and since when. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, MAX_ROWS);
	__type(key, __u32);
	__type(value, struct reclaim_state);
} reclaiming SEC(".maps");

/* dropped[0]: cumulative count of updates that failed (map full). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} dropped SEC(".maps");

static __always_inline void count_drop(void)
{
	__u32 zero = 0;
	__u64 *d = bpf_map_lookup_elem(&dropped, &zero);
	if (d)
		__sync_fetch_and_add(d, 1);
}

static __always_inline __u64 css_id(struct cgroup_subsys_state *css)
{
	if (!css)
		return 0;
	return BPF_CORE_READ(css, cgroup, kn, id);
}

/* The kernfs id of the memory cgroup a folio is charged to, 0 if none:
 * folio_memcg() in include/linux/memcontrol.h. File folios point at their
 * mem_cgroup; kmem ones at an obj_cgroup, which points at it. */
static __always_inline __u64 folio_memcg_id(struct folio *folio)
{
	unsigned long data = BPF_CORE_READ(folio, memcg_data);
	unsigned long mask = 3;

	if (bpf_core_enum_value_exists(enum memcg_data_flags, __NR_MEMCG_DATA_FLAGS))
		mask = bpf_core_enum_value(enum memcg_data_flags, __NR_MEMCG_DATA_FLAGS) - 1;
	if (!data)
		return 0;
	if (bpf_core_enum_value_exists(enum memcg_data_flags, MEMCG_DATA_KMEM) &&
	    (data & bpf_core_enum_value(enum memcg_data_flags, MEMCG_DATA_KMEM))) {
		struct obj_cgroup *objcg = (void *)(data & ~mask);
		struct mem_cgroup *m = BPF_CORE_READ(objcg, memcg);
		return m ? css_id(&m->css) : 0;
	}
	struct mem_cgroup *memcg = (void *)(data & ~mask);
	return css_id(&memcg->css);
}

static __always_inline unsigned long folio_flags(struct folio *folio)
{
	if (bpf_core_type_exists(memdesc_flags_t) &&
	    bpf_core_field_exists(struct folio, flags.f))
		return BPF_CORE_READ(folio, flags.f);
	return BPF_CORE_READ((struct folio___old *)folio, flags);
}

/* folio_nr_pages(): 1, or 1 << order for a large folio (PG_head set;
 * the order is the low byte of _flags_1). */
static __always_inline __u64 folio_pages(struct folio *folio)
{
	unsigned long flags = folio_flags(folio);
	__u32 head = bpf_core_enum_value(enum pageflags, PG_head);

	if (!(flags & (1UL << head)))
		return 1;
	if (!bpf_core_field_exists(struct folio, _flags_1))
		return 1;
	return 1ULL << (BPF_CORE_READ(folio, _flags_1) & 0xff);
}

/* The kernfs id of current's memory cgroup: task->cgroups->subsys[memory_cgrp_id]. */
static __always_inline __u64 task_memcg_id(struct task_struct *task)
{
	int idx = bpf_core_enum_value(enum cgroup_subsys_id, memory_cgrp_id);
	struct cgroup_subsys_state *css;

	if (idx < 0 || idx >= 12)
		return 0;
	css = BPF_CORE_READ(task, cgroups, subsys[idx]);
	return css_id(css);
}

static __always_inline void leader_comm(struct task_struct *task, char (*comm)[TASK_COMM_LEN])
{
	struct task_struct *leader = BPF_CORE_READ(task, group_leader);
	BPF_CORE_READ_STR_INTO(comm, leader, comm);
}

/* add_pages adds n pages to key's row of map, creating it with comm. */
static __always_inline void add_pages(void *map, void *key, __u64 n, struct task_struct *task)
{
	struct pages_val *v = bpf_map_lookup_elem(map, key);
	if (v) {
		__sync_fetch_and_add(&v->pages, n);
		return;
	}
	struct pages_val nv = { .pages = n };
	leader_comm(task, &nv.comm);
	if (bpf_map_update_elem(map, key, &nv, BPF_NOEXIST) == 0)
		return;
	v = bpf_map_lookup_elem(map, key); /* another CPU created it */
	if (v)
		__sync_fetch_and_add(&v->pages, n);
	else
		count_drop();
}

SEC("tp_btf/mm_filemap_add_to_page_cache")
int BPF_PROG(add_to_page_cache, struct folio *folio)
{
	struct task_struct *task = (void *)bpf_get_current_task();
	struct add_key k = {
		.tgid = bpf_get_current_pid_tgid() >> 32,
		.cgroup = bpf_get_current_cgroup_id(),
		.memcg = folio_memcg_id(folio),
	};
	add_pages(&adds, &k, folio_pages(folio), task);
	return 0;
}

SEC("tp_btf/mm_filemap_delete_from_page_cache")
int BPF_PROG(delete_from_page_cache, struct folio *folio)
{
	struct task_struct *task = (void *)bpf_get_current_task();
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)pid_tgid;
	__u32 kind = RECLAIM_NONE;

	if (BPF_CORE_READ(task, flags) & PF_KSWAPD) {
		kind = RECLAIM_KSWAPD;
	} else {
		struct reclaim_state *st = bpf_map_lookup_elem(&reclaiming, &tid);
		if (st)
			kind = st->kind;
	}
	if (kind == RECLAIM_NONE)
		return 0;
	struct evict_key k = {
		.memcg = folio_memcg_id(folio),
		.kind = kind,
		.tgid = pid_tgid >> 32,
		.cgroup = bpf_get_current_cgroup_id(),
		.recl_memcg = task_memcg_id(task),
	};
	add_pages(&evicts, &k, folio_pages(folio), task);
	return 0;
}

static __always_inline void reclaim_begin(__u32 kind)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct reclaim_state st = { .start_ns = bpf_ktime_get_ns(), .kind = kind };
	if (bpf_map_update_elem(&reclaiming, &tid, &st, BPF_ANY) != 0)
		count_drop();
}

static __always_inline void reclaim_end(void)
{
	struct task_struct *task = (void *)bpf_get_current_task();
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)pid_tgid;
	struct reclaim_state *st = bpf_map_lookup_elem(&reclaiming, &tid);
	if (!st)
		return; /* began before the programs were attached */
	__u64 ns = bpf_ktime_get_ns() - st->start_ns;
	__u32 kind = st->kind;
	bpf_map_delete_elem(&reclaiming, &tid);

	struct task_key k = {
		.tgid = pid_tgid >> 32,
		.cgroup = bpf_get_current_cgroup_id(),
		.memcg = task_memcg_id(task),
	};
	struct stall_val *v = bpf_map_lookup_elem(&stalls, &k);
	if (!v) {
		struct stall_val nv = {};
		leader_comm(task, &nv.comm);
		if (bpf_map_update_elem(&stalls, &k, &nv, BPF_NOEXIST) != 0 &&
		    !bpf_map_lookup_elem(&stalls, &k)) {
			count_drop();
			return;
		}
		v = bpf_map_lookup_elem(&stalls, &k);
		if (!v)
			return;
	}
	if (kind == RECLAIM_DIRECT)
		__sync_fetch_and_add(&v->direct_ns, ns);
	else
		__sync_fetch_and_add(&v->memcg_ns, ns);
}

SEC("tp_btf/mm_vmscan_direct_reclaim_begin")
int BPF_PROG(direct_reclaim_begin, int order, gfp_t gfp)
{
	reclaim_begin(RECLAIM_DIRECT);
	return 0;
}

SEC("tp_btf/mm_vmscan_direct_reclaim_end")
int BPF_PROG(direct_reclaim_end, unsigned long nr_reclaimed)
{
	reclaim_end();
	return 0;
}

SEC("tp_btf/mm_vmscan_memcg_reclaim_begin")
int BPF_PROG(memcg_reclaim_begin, int order, gfp_t gfp)
{
	reclaim_begin(RECLAIM_MEMCG);
	return 0;
}

SEC("tp_btf/mm_vmscan_memcg_reclaim_end")
int BPF_PROG(memcg_reclaim_end, unsigned long nr_reclaimed)
{
	reclaim_end();
	return 0;
}

SEC("fentry/workingset_refault")
int BPF_PROG(workingset_refault, struct folio *folio, void *shadow)
{
	struct task_struct *task = (void *)bpf_get_current_task();
	__u32 swapbacked = bpf_core_enum_value(enum pageflags, PG_swapbacked);

	if (folio_flags(folio) & (1UL << swapbacked))
		return 0; /* anon or shmem: not a file page (folio_is_file_lru) */
	struct refault_key k = {
		.memcg = folio_memcg_id(folio),
		.tgid = bpf_get_current_pid_tgid() >> 32,
		.cgroup = bpf_get_current_cgroup_id(),
	};
	add_pages(&refaults, &k, folio_pages(folio), task);
	return 0;
}
