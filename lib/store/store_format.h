/* SPDX-License-Identifier: MIT */
/*
 * The layout of a store: the shared memory through which one instrumented process
 * publishes its tags and counters. The writer is the process itself; readers
 * (allocinfo, allocinfod, the BPF iterator) treat every field as untrusted input.
 *
 * One mapping, offsets from its start:
 *
 *   [0, header_size)                 struct allocinfo_store_header
 *   [tags_offset, +tag_capacity*32)   struct allocinfo_store_tag[tag_capacity]
 *   [strings_offset, +strings_capacity) NUL-terminated strings, append-only
 *   [ext_offset, +tag_capacity*8)    struct allocinfo_store_tag_ext[tag_capacity]
 *                                    (0 in stores of older writers: no tokens)
 *   [counters_offset, +nr_cpus*cpu_stride)
 *                                    struct allocinfo_counter[nr_cpus][tag_capacity]
 *
 * The counters are split in nr_cpus shards (a count of shards, not only of CPUs):
 * shard 0, shared and updated with atomic adds; then thread shards, each with one
 * writer at a time, a thread of the process; then one shard per CPU, written by
 * restartable sequences. A tag's live bytes and calls are the sums over shards; only
 * the first shards_used shards can be nonzero.
 * Counters are shard-major so that two threads never write the same cache line. Regions
 * are reserved at creation time and never move: the fast path holds plain pointers.
 * Pages that were never touched cost nothing (sparse file, anonymous zero pages).
 *
 * Plain C, fixed-width types only: this header is shared with C readers and with eBPF.
 */
#ifndef ALLOCINFO_STORE_FORMAT_H
#define ALLOCINFO_STORE_FORMAT_H

#ifndef __bpf__
#include <stdint.h>
#endif

#define ALLOCINFO_STORE_MAGIC   "ALCINFO"     /* 8 bytes with its NUL */
#define ALLOCINFO_STORE_VERSION 1u

/* Tag slot 0 is never used (an unregistered static tag reads 0); slot 1 is the
 * discard slot: allocations made while counting is off or by allocinfo itself. */
#define ALLOCINFO_TAG_NONE      0u
#define ALLOCINFO_TAG_DISCARD   1u
#define ALLOCINFO_TAG_FIRST     2u

/* allocinfo_store_tag.flags */
#define ALLOCINFO_TAGF_USED      0x01u /* slot holds a tag */
#define ALLOCINFO_TAGF_DYNAMIC   0x02u /* caller tag: file/func come from debug info */
#define ALLOCINFO_TAGF_UNLOADED  0x04u /* its object was dlclose'd */
#define ALLOCINFO_TAGF_CXX       0x08u /* func is a C++ __PRETTY_FUNCTION__ */
#define ALLOCINFO_TAGF_SCOPE     0x10u /* defined by ALLOC_TAG_SCOPE() */
#define ALLOCINFO_TAGF_OVERFLOW  0x20u /* stands for callers beyond the bound */

/* allocinfo_store_header.block_layout */
#define ALLOCINFO_BLOCKS_GLIBC   0x1u  /* blocks with a record are glibc's chunks */

/* allocinfo_store_header.state */
#define ALLOCINFO_STATE_LIVE     1u
#define ALLOCINFO_STATE_EXITED   2u

struct allocinfo_store_header {
	char     magic[8];           /* ALLOCINFO_STORE_MAGIC */
	uint32_t version;            /* ALLOCINFO_STORE_VERSION */
	uint32_t header_size;        /* sizeof(struct allocinfo_store_header) */
	uint64_t total_size;         /* size of the whole mapping */
	int32_t  pid;
	uint32_t nr_cpus;            /* counter shards (see above) */
	uint64_t start_time;         /* /proc/<pid>/stat field 22, clock ticks since boot */
	uint32_t tag_capacity;
	uint32_t nr_tags;            /* slots [0, nr_tags) may be used; release-stored */
	uint64_t tags_offset;
	uint64_t strings_offset;
	uint64_t strings_capacity;
	uint64_t strings_used;       /* release-stored after the bytes are written */
	uint64_t counters_offset;
	uint64_t cpu_stride;         /* bytes between two shards */
	uint32_t enabled;            /* run-time switch: 1 counts; others may write it */
	uint32_t state;              /* ALLOCINFO_STATE_* */
	uint32_t exe_off;            /* string: the executable's path */
	uint32_t backend;            /* 0 shm or anonymous, 1 BPF maps */
	uint64_t generation;         /* bumped (release) after a tag slot is (re)written */
	uint32_t shards_used;        /* shards [0, shards_used) may be nonzero; grows,
				      * release-stored; 0 (older writers): all of them */
	uint32_t reserved32;
	uint64_t ext_offset;         /* struct allocinfo_store_tag_ext[tag_capacity], or
				      * 0: no slot has tokens */
	uint64_t small_base;         /* the process's small-block heap (an address in
				      * it), 0 none: for finding blocks from outside */
	uint64_t block_layout;       /* ALLOCINFO_BLOCKS_*: what else readers may check */
	uint64_t small_len_at;       /* where in the process the heap's mapped length is
				      * (a uint64_t that grows), 0 none */
	uint64_t reserved[3];
};

/* One tag: 32 bytes. A slot being rewritten has an odd seq (a seqlock). */
struct allocinfo_store_tag {
	uint32_t seq;
	uint32_t flags;              /* ALLOCINFO_TAGF_* */
	uint32_t file_off;           /* string offsets, 0 = none */
	uint32_t func_off;
	uint32_t module_off;         /* path of the ELF object; reports show its basename */
	uint32_t line;
	uint64_t addr;               /* dynamic tags: the call's address, link-time vaddr */
};

/* What a tag is besides its site, shown as trailing tokens: " via:NAME" (the
 * declared wrapper its allocations passed through) and " allocator:NAME" (an
 * allocator of the program's own). String offsets, 0 = none. Written with the slot,
 * under its seqlock. */
struct allocinfo_store_tag_ext {
	uint32_t via_off;
	uint32_t allocator_off;
};

/* One tag's counter in one shard. Sums over shards give the live bytes and calls. */
struct allocinfo_counter {
	int64_t  bytes;
	int64_t  calls;
};

#endif /* ALLOCINFO_STORE_FORMAT_H */
