/* SPDX-License-Identifier: MIT */
/*
 * The writer's side of a store (see store_format.h): creating the mapping, appending
 * strings, publishing tag slots, and giving a forked child a store of its own.
 * Everything here except store_create() runs with the registry lock held.
 */
#ifndef ALLOCINFO_STORE_H
#define ALLOCINFO_STORE_H

#include "internal.h"
#include "options.h"

namespace allocinfo {

struct store {
	char *base = nullptr;
	size_t size = 0;
	store_kind kind = store_kind::none;
	char path[256] = "";			/* the named file, "" for a memfd or anonymous store */
	allocinfo_store_header *hdr = nullptr;
	allocinfo_store_tag *tags = nullptr;
	char *strings = nullptr;
	allocinfo_store_tag_ext *ext = nullptr;	/* tokens of each slot */
	char *counters = nullptr;
	uint32_t shard_shift = 0;		/* log2 of the header's cpu_stride */
	uint32_t cpu_shard_first = 0;		/* shards [1, this) belong to threads */
	uint32_t nr_cpu_shards = 0;		/* then one per CPU */
};
extern store g_store HIDDEN;

/* Capacities of shm stores; the regions are reserved up front and cost nothing until
 * touched. A BPF store has a smaller tag capacity (store_bpf.cpp): its counters map
 * is allocated in full. */
constexpr uint32_t STORE_TAG_CAPACITY = 1u << 16;
constexpr uint64_t STORE_STRINGS_CAPACITY = 16u << 20;
/* Counter shards: shard 0, shared (atomic adds); then thread shards, each serving one
 * thread at a time; then one shard per CPU (restartable sequences) for threads beyond
 * that many alive at once. An shm store has four shards per CPU, at least 64 in all:
 * pages never touched cost nothing. A BPF store's counters map is allocated in full,
 * so it has fewer thread shards: two per CPU, within the bounds below. */
constexpr uint32_t STORE_MIN_SHARDS = 64;
constexpr uint32_t STORE_MAX_SHARDS = 4096;
constexpr uint32_t STORE_MAX_CPU_SHARDS = 1024;	/* CPUs past it use shard 0 */
constexpr uint32_t STORE_BPF_MIN_THREAD_SHARDS = 8;
constexpr uint32_t STORE_BPF_MAX_THREAD_SHARDS = 64;

/* The layout of a store with this capacity (store_bpf.cpp sizes its maps by it). */
void store_layout(allocinfo_store_header *h, uint32_t nr_shards, uint32_t tag_capacity) HIDDEN;

/* Creates this process's store (called once, from the first allocation). Falls back
 * from shm to an anonymous mapping; returns false only if no memory could be mapped. */
bool store_create(store_kind requested) HIDDEN;

/* Appends a string (deduplicated); returns its offset, or 0 if the area is full. */
uint32_t store_intern(const char *s) HIDDEN;

/* Writes slot `slot` (and its tokens, string offsets) under its seqlock and
 * publishes it. */
void store_publish_tag(uint32_t slot, uint32_t flags, uint32_t file_off, uint32_t func_off,
		       uint32_t module_off, uint32_t line, uint64_t addr, uint32_t via_off = 0,
		       uint32_t allocator_off = 0) HIDDEN;
void store_set_tag_flags(uint32_t slot, uint32_t set, uint32_t clear) HIDDEN;
/* Frees a slot: zeroes its counters in every shard and marks it unused. */
void store_clear_tag(uint32_t slot) HIDDEN;

/* Sum of a slot's counters over all shards. */
void store_sum(uint32_t slot, int64_t *bytes, int64_t *calls) HIDDEN;

/* Just before fork, registry lock held: the private copy the child will count in. */
void store_fork_prepare() HIDDEN;

/*
 * In a forked child: the private copy of the parent's store made before fork, moved
 * to the store's address so every pointer into it stays valid (one system call). The child's own shm or BPF store is made from it later, by
 * store_publish_pending(), at the child's first counter update (thread_shard.cpp): a
 * child that execs or exits without allocating never pays for one.
 */
void store_fork_child() HIDDEN;
/* A forked child that has not published its store yet does so now, whether or not it
 * has counted anything (a daemon, in setsid(): daemon_start.cpp). */
void store_publish_forked() HIDDEN;

/* Set while this process counts in a store not yet published as asked; every thread
 * then counts through counter_add_unowned(), without a shard:
 *   STORE_PENDING_FORK  a forked child, in a private copy (store_fork_child());
 *   STORE_PENDING_BPF   asked for a BPF store, in its shm store of the same layout,
 *                       until a thread of the library's makes the maps
 *                       (store_bpf_ready()), after the process has lived a while. */
constexpr uint32_t STORE_PENDING_FORK = 1, STORE_PENDING_BPF = 2;
extern uint32_t g_store_pending HIDDEN;
static inline bool store_pending()
{
	return __atomic_load_n(&g_store_pending, __ATOMIC_ACQUIRE) != 0;
}

/* From counter_add_unowned() while store_pending(): publishes a forked child's store
 * and returns false (the caller then counts as usual), or, where it cannot wait for
 * the registry lock (inside the library, or while fork holds it) or the store is
 * waiting for its BPF maps, counts the update in shard 0, atomically, and returns
 * true. */
bool store_pending_update(uint32_t slot, int64_t bytes, int64_t calls) HIDDEN;

/* The library's thread, once the process has lived a while: moves the counters of
 * a store waiting for its BPF maps (STORE_PENDING_BPF) into them, while every
 * update waits. False if no BPF store could be made (it stays shm). */
bool store_publish_bpf() HIDDEN;

/* At exit: marks the store exited and removes its name (a named file's). */
void store_retire() HIDDEN;

} /* namespace allocinfo */

#endif
