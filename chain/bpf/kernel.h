/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kernel.h: the few kernel types chain.bpf.c reads, declared by hand with
 * preserve_access_index so that clang emits CO-RE relocations and the
 * loader (cilium/ebpf) fixes the offsets against the running kernel's BTF
 * (/sys/kernel/btf/vmlinux). Only the members used are declared; their
 * order and offsets here do not matter. Checked against 6.18's BTF
 * (bpftool btf dump file /sys/kernel/btf/vmlinux format c).
 *
 * A hand-written header instead of a generated vmlinux.h: ~100 lines a
 * reviewer can read instead of 2.8 MB tied to one build of one kernel.
 */
#ifndef MEMDIAG_KERNEL_H
#define MEMDIAG_KERNEL_H

typedef unsigned char __u8;
typedef unsigned short __u16;
typedef unsigned int __u32;
typedef unsigned long long __u64;
typedef signed char __s8;
typedef short __s16;
typedef int __s32;
typedef long long __s64;
typedef __u16 __be16;
typedef __u32 __be32;
typedef __u32 __wsum;
typedef __u64 u64;
typedef __u32 u32;
typedef __u32 gfp_t;
typedef _Bool bool;
#define true 1
#define false 0

/* include/uapi/linux/bpf.h */
enum bpf_map_type {
	BPF_MAP_TYPE_HASH = 1,
	BPF_MAP_TYPE_ARRAY = 2,
};
#define BPF_ANY 0
#define BPF_NOEXIST 1

/* include/linux/sched.h: a #define, so not in BTF; unchanged since 2.6. */
#define PF_KSWAPD 0x00020000

struct kernfs_node {
	u64 id;
} __attribute__((preserve_access_index));

struct cgroup {
	struct kernfs_node *kn;
} __attribute__((preserve_access_index));

struct cgroup_subsys_state {
	struct cgroup *cgroup;
} __attribute__((preserve_access_index));

struct mem_cgroup {
	struct cgroup_subsys_state css;
} __attribute__((preserve_access_index));

struct obj_cgroup {
	struct mem_cgroup *memcg;
} __attribute__((preserve_access_index));

struct css_set {
	struct cgroup_subsys_state *subsys[12];
} __attribute__((preserve_access_index));

struct task_struct {
	unsigned int flags;
	int pid;
	int tgid;
	char comm[16];
	struct task_struct *group_leader;
	struct css_set *cgroups;
} __attribute__((preserve_access_index));

/* 6.18: folio->flags is memdesc_flags_t { unsigned long f; }. */
typedef struct {
	unsigned long f;
} memdesc_flags_t;

struct folio {
	memdesc_flags_t flags;
	unsigned long memcg_data;
	unsigned long _flags_1;
} __attribute__((preserve_access_index));

/* Before 6.18 (memdesc_flags_t), folio->flags was a plain unsigned long. */
struct folio___old {
	unsigned long flags;
} __attribute__((preserve_access_index));

/* include/linux/cgroup_subsys.h via BTF: the memory controller's index. */
enum cgroup_subsys_id {
	memory_cgrp_id = 4,
};

/* include/linux/memcontrol.h: flags in the low bits of folio->memcg_data. */
enum memcg_data_flags {
	MEMCG_DATA_OBJEXTS = 1,
	MEMCG_DATA_KMEM = 2,
	__NR_MEMCG_DATA_FLAGS = 4,
};

/* include/linux/page-flags.h */
enum pageflags {
	PG_head = 6,
	PG_swapbacked = 17,
};

#endif
