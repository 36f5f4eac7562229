/* SPDX-License-Identifier: MIT */
/*
 * The BPF store: what lives in BPF maps instead of the shm file (store_format.h).
 * The header, tag slots and strings stay in the file; with header.backend == 1 the
 * counters region is not in the file but in the pinned `counters` map, whose
 * mmap has exactly the layout of that region. Pins, under
 * /sys/fs/bpf/allocinfo/<pid>/:
 *
 *   counters   array, BPF_F_MMAPABLE, key cpu * tag_capacity + slot,
 *              value struct allocinfo_counter (store_format.h)
 *   tags       hash, key slot, value struct allocinfo_bpf_tag: each tag's name as
 *              the reports print it, for bpftool and the iterator
 *   meta       array of one struct allocinfo_bpf_meta: whose maps these are
 *   allocinfo  the report iterator (a BPF link): `cat` prints the report
 *
 * Every map carries BTF, so `bpftool map dump` shows named fields. Plain C, shared
 * with the iterator program (tools/bpf/allocinfo_iter.bpf.c) and the readers.
 */
#ifndef ALLOCINFO_STORE_BPF_FORMAT_H
#define ALLOCINFO_STORE_BPF_FORMAT_H

#include "store_format.h"

#define ALLOCINFO_BPF_DIR        "/sys/fs/bpf/allocinfo"
#define ALLOCINFO_BPF_COUNTERS   "counters"
#define ALLOCINFO_BPF_TAGS       "tags"
#define ALLOCINFO_BPF_META       "meta"
#define ALLOCINFO_BPF_ITER       "allocinfo"

/* The maps' layout: 2 added via and allocator to the tags map's values. Readers
 * accept every version up to theirs (the counters map has not changed). */
#define ALLOCINFO_BPF_META_VERSION 2u

/* Field sizes of a tag's names; longer names are cut (the last byte is a NUL). */
#define ALLOCINFO_BPF_FILE_LEN   192
#define ALLOCINFO_BPF_FUNC_LEN   128
#define ALLOCINFO_BPF_MODULE_LEN 64
#define ALLOCINFO_BPF_STORE_LEN  256
#define ALLOCINFO_BPF_TOKEN_LEN  64

/* One tag, as `allocinfo -p PID` names it: file, line, func and the module's
 * basename, after the same clean-up (one word each; dynamic tags symbolized), and
 * its trailing tokens' values, empty for none: " via:" and " allocator:". */
struct allocinfo_bpf_tag {
	char     file[ALLOCINFO_BPF_FILE_LEN];
	uint32_t line;
	char     func[ALLOCINFO_BPF_FUNC_LEN];
	char     module[ALLOCINFO_BPF_MODULE_LEN];
	uint32_t flags;              /* ALLOCINFO_TAGF_* */
	char     via[ALLOCINFO_BPF_TOKEN_LEN];
	char     allocator[ALLOCINFO_BPF_TOKEN_LEN];
};

/* Ties the maps to a process and its store: readers compare it with the header, and
 * garbage collection with the store file it names. */
struct allocinfo_bpf_meta {
	int32_t  pid;
	uint32_t nr_cpus;
	uint32_t tag_capacity;
	uint32_t version;            /* ALLOCINFO_BPF_META_VERSION */
	uint64_t start_time;         /* as allocinfo_store_header.start_time */
	char     store[ALLOCINFO_BPF_STORE_LEN]; /* the store file's path */
};

#endif /* ALLOCINFO_STORE_BPF_FORMAT_H */
