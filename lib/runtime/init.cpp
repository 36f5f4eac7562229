/* SPDX-License-Identifier: MIT */
/*
 * Start-up, fork and exit. Start-up happens inside the first allocation of the
 * process (possibly before the C library has run its constructors), so it reads the
 * environment directly and maps memory with system calls only.
 */
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <unistd.h>

#include "backend.h"
#include "caller_tags.h"
#include "internal.h"
#include "options.h"
#include "registry.h"
#include "small_heap.h"
#include "store.h"
#include "store_bpf.h"
#include "thread_shard.h"

namespace allocinfo {
const uint32_t g_stop = 0;
}

extern "C" {
EXPORT __thread struct allocinfo_thread allocinfo__thread
	__attribute__((tls_model("initial-exec")));
/* The header's inline fast path: the same switch as `go`, and the same plain blocks
 * as plain_when_off; only with glibc underneath (a sanitizer's allocator must see
 * every block). Copies, set together: a program may copy-relocate this exported
 * object, so the library would reach it through the GOT, where g_fast is one
 * RIP-relative load away. */
EXPORT struct allocinfo__inline_state_v1 allocinfo__inline_v1 = { &allocinfo::g_stop, 0, 0 };
}

namespace allocinfo {

alignas(64) fast_state g_fast = { &g_stop, nullptr, 0, 0, 0, 0, 0, 0, nullptr, small::NO_BASE };

namespace {

pid_t g_starting_tid;

/* Counting off (or never on) means plain glibc blocks, unless a sanitizer's allocator
 * is underneath. */
void set_plain_when_off()
{
	g_fast.plain_when_off = !RECORD_ALWAYS;
	allocinfo__inline_v1.plain = !RECORD_ALWAYS;
}

/* Under a sanitizer, the sanitizer's own start-up calls malloc before its
 * interceptors work: start only once constructors run. */
bool g_constructors_running;

void on_exit()
{
	store_retire();
}

void fork_prepare()
{
	registry_fork_prepare();
}

void fork_parent()
{
	registry_fork_parent();
}

/* The child's own store first, while the registry lock still keeps every tag
 * writer out: a tag published before it would land in the parent's store. */
void fork_child()
{
	small::fork_child();
	shards_fork_child();
	store_fork_child();
	registry_fork_child();
}

void start()
{
	options o = read_options();
	if (o.mode == profiling_mode::never) {
		__atomic_store_n(&g_fast.state, STATE_NEVER, __ATOMIC_RELEASE);
		set_plain_when_off();	/* every block plain, cheaply */
		return;
	}
	backend::init();
	if (!store_create(o.store) || !caller_tags_init()) {
		log_message("cannot map memory for the counters; profiling is off");
		__atomic_store_n(&g_fast.state, STATE_NEVER, __ATOMIC_RELEASE);
		set_plain_when_off();
		return;
	}
	allocinfo_store_header *h = g_store.hdr;
	h->enabled = o.mode == profiling_mode::on;
	g_fast.nr_shards = h->nr_cpus;
	g_fast.counters = g_store.counters;
	g_fast.shard_shift = g_store.shard_shift;
	g_fast.counter_mask = counter_offset(h->tag_capacity - 1);
	g_fast.enabled = &h->enabled;
	g_fast.debug = o.debug;
	if (!shards_init())
		log_message("no thread exit hook: threads count in per-CPU shards");
	/* Its own small blocks only over glibc and without debugging: a sanitizer's
	 * allocator must see every block, and debugging checks records. */
	if (o.heap == heap_kind::own && !o.debug && !RECORD_ALWAYS) {
		if (small::init())
			allocinfo__inline_v1.small_max = small::MAX;
		else
			log_message("cannot reserve address space for the small-block heap; "
				    "every counted block is glibc's");
	}
	registry_init();
	__atomic_store_n(&g_fast.state, STATE_RUNNING, __ATOMIC_RELEASE);
	/* Debugging takes the slow path, which checks every pointer. */
	if (!o.debug) {
		set_plain_when_off();
		__atomic_store_n(&g_fast.go, g_fast.enabled, __ATOMIC_RELEASE);
		if (!RECORD_ALWAYS)
			__atomic_store_n(&allocinfo__inline_v1.go, g_fast.enabled, __ATOMIC_RELEASE);
	}
}

} /* namespace */

void note_constructors_running()
{
	__atomic_store_n(&g_constructors_running, true, __ATOMIC_RELEASE);
}

void ensure_init()
{
	uint32_t s = __atomic_load_n(&g_fast.state, __ATOMIC_ACQUIRE);
	if (s == STATE_RUNNING || s == STATE_NEVER)
		return;
#ifdef ALLOCINFO_BACKEND_NEXT
	if (!__atomic_load_n(&g_constructors_running, __ATOMIC_ACQUIRE))
		return;	/* served from the bootstrap arena meanwhile */
#endif
	if (s == STATE_UNINIT &&
	    __atomic_compare_exchange_n(&g_fast.state, &s, STATE_STARTING, false,
					__ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
		g_starting_tid = gettid();
		start();
		return;
	}
	if (g_starting_tid == gettid())
		return;	/* allocating from inside start() */
	while (__atomic_load_n(&g_fast.state, __ATOMIC_ACQUIRE) == STATE_STARTING)
		sched_yield();
}

} /* namespace allocinfo */

using namespace allocinfo;

/* Before any other constructor of a program linked with the library. */
__attribute__((constructor(101))) static void allocinfo_constructor()
{
	note_constructors_running();
	ensure_init();
	if (__atomic_load_n(&g_fast.state, __ATOMIC_ACQUIRE) != STATE_RUNNING)
		return;
	pthread_atfork(fork_prepare, fork_parent, fork_child);
	atexit(on_exit);
	store_bpf_ready();
}
