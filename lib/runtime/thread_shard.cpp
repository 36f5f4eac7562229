/* SPDX-License-Identifier: MIT */
/* Handing counter shards to threads and taking them back (see thread_shard.h). */
#include "thread_shard.h"

#include <pthread.h>
#include <string.h>

#include "cpu_shard.h"
#include "small_heap.h"
#include "store.h"

namespace allocinfo {

namespace {

enum class shard_state : uint8_t {
	none,		/* has not asked for a shard yet */
	owned,		/* allocinfo__thread.shard is its own */
	waiting,	/* none was free: counts in its CPU's shard, or in shard 0,
			 * and asks again once another thread has given one back */
	shared,		/* exiting (or claiming): counts in its CPU's shard, or in
			 * shard 0, for good */
};
__thread shard_state t_state __attribute__((tls_model("initial-exec")));
__thread uint32_t t_index __attribute__((tls_model("initial-exec")));
/* g_given_back when this thread last found no shard free. */
__thread uint64_t t_seen_given_back __attribute__((tls_model("initial-exec")));

/* Bit i: shard i belongs to a live thread. Shard 0 is never handed out. */
uint64_t g_taken[STORE_MAX_SHARDS / 64];
/* How many times a shard was given back: a waiting thread asks again when it moves. */
uint64_t g_given_back;

pthread_key_t g_exit_key;
bool g_have_exit_key;

char *shard_base(uint32_t i)
{
	return g_fast.counters + ((uint64_t)i << g_fast.shard_shift);
}

/* Set once a thread has counted in a CPU's shard. */
bool g_cpu_shards_used;

/* The lowest free thread shard (which keeps shards_used low), or 0. Acquire: the
 * previous owner's plain writes happen before ours. */
uint32_t take_free_shard()
{
	uint32_t n = g_store.cpu_shard_first;
	for (uint32_t w = 0; w * 64 < n; w++) {
		uint64_t bits = __atomic_load_n(&g_taken[w], __ATOMIC_RELAXED);
		while (~bits) {
			uint32_t i = w * 64 + (uint32_t)__builtin_ctzll(~bits);
			if (i >= n)
				return 0;
			if (__atomic_compare_exchange_n(&g_taken[w], &bits, bits | 1ull << (i % 64),
							false, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
				return i;
		}
	}
	return 0;
}

void give_back(uint32_t i)
{
	__atomic_fetch_and(&g_taken[i / 64], ~(1ull << (i % 64)), __ATOMIC_RELEASE);
	__atomic_fetch_add(&g_given_back, 1, __ATOMIC_RELEASE);
}

/* Raises shards_used to cover shard i before the thread writes into it. */
void note_used(uint32_t i)
{
	uint32_t *used = &g_store.hdr->shards_used;
	uint32_t cur = __atomic_load_n(used, __ATOMIC_RELAXED);
	while (cur <= i && !__atomic_compare_exchange_n(used, &cur, i + 1, false,
							 __ATOMIC_RELEASE, __ATOMIC_RELAXED)) {
	}
}

/* The key's destructor, at thread exit: later allocations of this thread (other
 * destructors) count in its CPU's shard, or in shard 0. */
void on_thread_exit(void *)
{
	if (t_state == shard_state::waiting)
		t_state = shard_state::shared;	/* no shard claimed past its hook */
	if (t_state != shard_state::owned)
		return;
	allocinfo__thread.shard = nullptr;
	t_state = shard_state::shared;
	/* Only a thread that owns a shard has a cache; without its shard now, the thread
	 * (a signal handler, a later destructor) can no longer refill it. */
	small::thread_exit();
	give_back(t_index);
}

bool claim()
{
	/* Shared until it owns one: an allocation from a signal handler meanwhile does
	 * not claim a second shard. */
	t_state = shard_state::shared;
	if (!g_have_exit_key)
		return false;
	/* Read first: a shard given back during the search below brings a retry. */
	uint64_t given_back = __atomic_load_n(&g_given_back, __ATOMIC_ACQUIRE);
	uint32_t i = take_free_shard();
	if (!i) {
		/* CPU shards until one comes back; the exit hook, set here too, ends the
		 * wait, so that a shard is never claimed after the hook ran. */
		t_seen_given_back = given_back;
		if (pthread_setspecific(g_exit_key, reinterpret_cast<void *>(1)) == 0)
			t_state = shard_state::waiting;
		return false;
	}
	note_used(i);
	t_index = i;
	allocinfo__thread.shard = shard_base(i);
	t_state = shard_state::owned;
	/* May allocate (keys past the first 32): counted in the new shard. */
	if (pthread_setspecific(g_exit_key, reinterpret_cast<void *>(1)) != 0) {
		on_thread_exit(nullptr);	/* no exit hook: do not keep it */
		return false;
	}
	return true;
}

} /* namespace */

void counter_add_unowned(uint32_t slot, int64_t bytes, int64_t calls)
{
	/* A forked child's first update publishes its store (store.h). */
	if (unlikely(store_pending()) && store_pending_update(slot, bytes, calls))
		return;
	if ((t_state == shard_state::none ||
	     (t_state == shard_state::waiting &&
	      __atomic_load_n(&g_given_back, __ATOMIC_RELAXED) != t_seen_given_back)) &&
	    claim()) {
		counter_add(slot, bytes, calls);
		return;
	}
	if (unlikely(!__atomic_load_n(&g_cpu_shards_used, __ATOMIC_RELAXED))) {
		/* Before the first write there: readers then sum every shard. */
		note_used(g_fast.nr_shards - 1);
		__atomic_store_n(&g_cpu_shards_used, true, __ATOMIC_RELAXED);
	}
	if (cpu_shard_add(slot, bytes, calls))
		return;
	allocinfo_counter *c = counter_at(shard_base(0), slot);
	__atomic_fetch_add(&c->bytes, bytes, __ATOMIC_RELAXED);
	__atomic_fetch_add(&c->calls, calls, __ATOMIC_RELAXED);
}

bool shards_init()
{
	g_taken[0] = 1;
	cpu_shards_init(shard_base(g_store.cpu_shard_first), (uint64_t)1 << g_fast.shard_shift,
			g_store.nr_cpu_shards);
	g_have_exit_key = pthread_key_create(&g_exit_key, on_thread_exit) == 0;
	return g_have_exit_key;
}

void shards_fork_child()
{
	memset(g_taken, 0, sizeof(g_taken));
	g_taken[0] = 1;
	if (store_pending()) {
		/* No shard until the child's store is published: the first update then
		 * takes the slow path, which publishes it. */
		allocinfo__thread.shard = nullptr;
		t_state = shard_state::none;
	} else if (t_state == shard_state::owned) {
		g_taken[t_index / 64] |= 1ull << (t_index % 64);
	}
	g_given_back++;	/* the parent's other threads' shards: free here */
}

uint32_t shards_in_use()
{
	uint32_t used = __atomic_load_n(&g_store.hdr->shards_used, __ATOMIC_ACQUIRE);
	return used >= 1 && used <= g_fast.nr_shards ? used : g_fast.nr_shards;
}

} /* namespace allocinfo */
