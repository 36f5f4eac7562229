/* SPDX-License-Identifier: MIT */
/*
 * Counter updates without a lock-prefixed instruction: each thread adds into a shard
 * of the store's counters that no other thread writes.
 *
 * Shard 0 is shared and only ever updated with atomic adds. The thread shards that
 * follow it are handed to threads, one each, at their first counted allocation, and
 * handed back when the thread exits (a pthread key's destructor). The last shards are
 * per CPU (cpu_shard.h). The owner updates its counters with plain
 * read-modify-write instructions, one instruction per word: a signal handler running
 * on the same thread cannot split one, and a reader in another process never sees a
 * torn 8-byte value. A shard keeps its values when its thread exits, and the next
 * owner adds to them: counts are sums over shards, so nothing is folded and nothing is
 * lost when threads come and go, and a block freed by another thread simply subtracts
 * in that thread's shard.
 *
 * A thread that finds every thread shard taken, or that allocates after its exit hook
 * ran, counts in its CPU's shard with a restartable sequence (cpu_shard.h), and where
 * rseq is not registered, in the shared shard. The first asks again, on its next
 * counter update, each time another thread has given a shard back since it last
 * looked (one load and compare on that slower path).
 *
 * The header's shards_used is the high-water mark of claimed shards, so that readers
 * (and fork) skip shards never written.
 */
#ifndef ALLOCINFO_THREAD_SHARD_H
#define ALLOCINFO_THREAD_SHARD_H

#include "internal.h"

namespace allocinfo {

/* This thread's shard: the address of its counter for slot 0; null while it has none.
 * It lives next to the thread's tag words, which the fast path reads anyway. */
static inline char *thread_shard()
{
	return static_cast<char *>(allocinfo__thread.shard);
}

/* The header's inline fast path finds a counter the same way (layout version 1). */
static_assert(sizeof(allocinfo_counter) == 16 && offsetof(allocinfo_counter, bytes) == 0 &&
	      offsetof(allocinfo_counter, calls) == 8, "a counter is the header's version 1");

static inline allocinfo_counter *counter_at(char *shard, uint32_t slot)
{
	return reinterpret_cast<allocinfo_counter *>(shard + counter_offset(slot));
}

/* *p += v as one instruction, which neither a signal nor a reader can split. */
static inline __attribute__((always_inline)) void add_owned(int64_t *p, int64_t v)
{
#if defined(__x86_64__)
	asm("addq %1, %0" : "+m"(*p) : "er"(v));
#else
	__atomic_store_n(p, __atomic_load_n(p, __ATOMIC_RELAXED) + v, __ATOMIC_RELAXED);
#endif
}

static inline __attribute__((always_inline)) void sub_owned(int64_t *p, int64_t v)
{
#if defined(__x86_64__)
	asm("subq %1, %0" : "+m"(*p) : "er"(v));
#else
	__atomic_store_n(p, __atomic_load_n(p, __ATOMIC_RELAXED) - v, __ATOMIC_RELAXED);
#endif
}

/* The counter at byte offset `counter` of the thread's own shard, less `bytes` and
 * one call: free()'s update, addressed by base and index so that no address is
 * computed first. */
static inline __attribute__((always_inline)) void
sub_owned_at(char *shard, uint32_t counter, int64_t bytes)
{
#if defined(__x86_64__)
	asm volatile("subq %0, (%1,%2)\n\tsubq $1, 8(%1,%2)"
		     : : "r"(bytes), "r"(shard), "r"((uintptr_t)counter) : "memory");
#else
	auto *c = reinterpret_cast<allocinfo_counter *>(shard + counter);
	sub_owned(&c->bytes, bytes);
	sub_owned(&c->calls, 1);
#endif
}

/* For a thread without a shard: claims one, or counts in its CPU's shard, or adds
 * atomically to the shared shard. */
void counter_add_unowned(uint32_t slot, int64_t bytes, int64_t calls) HIDDEN;

static inline __attribute__((always_inline)) void
counter_add(uint32_t slot, int64_t bytes, int64_t calls)
{
	char *shard = thread_shard();
	if (unlikely(!shard)) {
		counter_add_unowned(slot, bytes, calls);
		return;
	}
	allocinfo_counter *c = counter_at(shard, slot);
	add_owned(&c->bytes, bytes);
	add_owned(&c->calls, calls);
}

static inline __attribute__((always_inline)) void
counter_sub(uint32_t slot, int64_t bytes, int64_t calls)
{
	char *shard = thread_shard();
	if (unlikely(!shard)) {
		counter_add_unowned(slot, -bytes, -calls);
		return;
	}
	allocinfo_counter *c = counter_at(shard, slot);
	sub_owned(&c->bytes, bytes);
	sub_owned(&c->calls, calls);
}

/* Start-up: the exit hook and the CPU shards. False if there is no exit hook (threads
 * then count in CPU shards, or shard 0). */
bool shards_init() HIDDEN;
/* In a forked child: only the calling thread survives, and keeps its shard. */
void shards_fork_child() HIDDEN;
/* Shards that may hold counts: [0, shards_in_use()). */
uint32_t shards_in_use() HIDDEN;

} /* namespace allocinfo */

#endif /* ALLOCINFO_THREAD_SHARD_H */
