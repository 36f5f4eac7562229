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
#include "callbacks.h"
#include "caller_tags.h"
#include "foreign_path.h"
#include "frames.h"
#include "internal.h"
#include "library_dlopen.h"
#include "options.h"
#include "page_starts.h"
#include "pprof_profiler.h"
#include "rcu_library.h"
#include "reader_loader.h"
#include "registry.h"
#include "route.h"
#include "sampler.h"
#include "small_heap.h"
#include "store.h"
#include "store_bpf.h"
#include "table_pages.h"
#include "thread_shard.h"

namespace allocinfo {
const uint32_t g_stop = 0;
}

extern "C" {
EXPORT __thread struct allocinfo_thread allocinfo__thread
	__attribute__((tls_model("initial-exec")));
/* The header's inline fast path: the same switch as `go`, and the same plain blocks
 * as plain_when_off; only with glibc underneath (a sanitizer's or another allocator
 * must see every block, and the inline path calls glibc's). Copies, set together: a
 * program may copy-relocate this exported object, so the library would reach it
 * through the GOT, where g_fast is one RIP-relative load away. */
EXPORT struct allocinfo__inline_state_v1 allocinfo__inline_v1 = { &allocinfo::g_stop, 0, 0 };
}

namespace allocinfo {

alignas(64) fast_state g_fast = { &g_stop, nullptr, 0, 0, 0, 0, 0, 0, nullptr, small::NO_BASE,
					0, 0, 0, 0, 0, SIZE_MAX };

namespace {

pid_t g_starting_tid;

/* Counting off (or never on) means plain glibc blocks, unless a sanitizer's or
 * another allocator is underneath; or, with ALLOCINFO=never, that allocator's, where
 * the library's calls to glibc's functions lead to it (backend::init()). The
 * header's inline path calls the program's own __libc_malloc, glibc's: it stays off. */
void set_plain_when_off()
{
	bool plain = !RECORD_ALWAYS && !backend::g_foreign_flag;
	g_fast.plain_when_off = plain || (backend::g_no_records && backend::g_fast_path);
	allocinfo__inline_v1.plain = plain;
}

/* The header's inline path (which calls the program's own __libc_malloc) and the
 * small-block heap only over glibc. */
bool glibc_underneath()
{
	return backend::g_underneath == backend::underneath::glibc;
}

/* Under a sanitizer, the sanitizer's own start-up calls malloc before its
 * interceptors work: start only once constructors run. */
bool g_constructors_running;

void on_exit()
{
	store_retire();
}

/* liburcu-bp as this thread's fork_prepare() found it: one loaded meanwhile ran no
 * before_fork(). Per thread, as forks from several threads prepare at once. */
__thread const rcu::api *t_fork_rcu;

/*
 * The library's own loads come first of all: a thread inside dlopen() may allocate
 * and take any lock below, and a child must not inherit its half-made link map
 * (library_dlopen.h). liburcu-bp's fork protocol, when it is loaded, comes next:
 * before_fork() waits for a grace period under way to end, and one can wait for a
 * reader (a callback, or an allocation that samples) that waits for a lock taken
 * below; a child left without after_fork_child() would keep the parent's other
 * threads registered as readers, and its next grace period (removing a callback,
 * detaching a profiler) would never end. The built-in profiler's and the sampler's
 * locks come next, then the registry's. The child's profiler thread starts once its
 * signal mask is back.
 */
void fork_prepare()
{
	library_dlopen_fork_prepare();
	t_fork_rcu = rcu::loaded();
	if (t_fork_rcu)
		t_fork_rcu->before_fork();
	pprof_profiler::fork_prepare();
	sampler::fork_prepare();
	registry_fork_prepare();
	store_fork_prepare();
	page_starts::fork_prepare();	/* last: nothing after it allocates */
}

void fork_parent()
{
	page_starts::fork_parent();
	registry_fork_parent();
	sampler::fork_parent();
	pprof_profiler::fork_parent();
	if (t_fork_rcu)
		t_fork_rcu->after_fork_parent();
	library_dlopen_fork_parent();
}

/* The child's private store first, while the registry lock still keeps every tag
 * writer out (a tag published before it would land in the parent's store), and
 * before the shards, which wait for it to be published. */
void fork_child()
{
	library_dlopen_fork_child();	/* first: a lock no thread may sleep on yet */
	page_starts::fork_child();
	route_fork_child();
	tables_fork_child();
	small::fork_child();
	store_fork_child();	/* a private copy; published at the first update */
	shards_fork_child();
	registry_fork_child();
	sampler::fork_child();
	if (t_fork_rcu)
		t_fork_rcu->after_fork_child();
	reader_fork_child();	/* before the profiler's thread, which writes through it */
	pprof_profiler::fork_child();
}

void start()
{
	/* Before anything is allocated: from here on blocks are the right allocator's. */
	options o = read_options();	/* allocates nothing */
	backend::init(o.mode == profiling_mode::never);
	g_fast.plain_free_checked = backend::g_foreign_flag != 0;
	page_starts::g_guarded = backend::g_foreign_flag != 0 && !RECORD_ALWAYS;
	/* Said to a terminal only: the program's own output to a file or a pipe (a test
	 * suite comparing it, a log) stays what it is without the library. */
	if (backend::g_program_allocator && o.mode != profiling_mode::never &&
	    isatty(STDERR_FILENO))
		log_message(backend::g_sanitizer
			    ? "the program has a sanitizer's runtime linked in, whose malloc and "
			      "free its own calls reach directly: nothing is counted (as with "
			      "ALLOCINFO=never); built with gcc, or with clang's -shared-libsan, "
			      "it is counted"
			    : "the program defines malloc or free itself, and its own calls "
			      "of them cannot be routed: nothing is counted (as with ALLOCINFO=never)");
	if (backend::g_heap_tool && o.mode != profiling_mode::never && isatty(STDERR_FILENO))
		log_message("running under a Valgrind tool that replaces malloc: nothing is "
			    "counted (as with ALLOCINFO=never), so that it sees the program's own "
			    "blocks");
	if (o.mode == profiling_mode::never || backend::g_program_allocator ||
	    backend::g_heap_tool) {
		__atomic_store_n(&g_fast.state, STATE_NEVER, __ATOMIC_RELEASE);
		set_plain_when_off();	/* every block plain, cheaply */
		return;
	}
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
	g_fast.plain_free_checked = o.debug || backend::g_foreign_flag;
	if (!shards_init())
		log_message("no thread exit hook: threads count in per-CPU shards");
	/* Its own small blocks only over glibc and without debugging: a sanitizer's or
	 * the program's own allocator must see every block, and debugging checks
	 * records. Over another allocator, ALLOCINFO_HEAP=own set explicitly asks for
	 * them all the same, where the fast path runs (the allocator after us) or the
	 * lean path (the allocator first: foreign_path.h). */
	bool heap_here = glibc_underneath() ||
			 ((backend::g_fast_path ||
			   backend::g_underneath == backend::underneath::first) &&
			  heap_variable_set());
	if (o.heap == heap_kind::own && !o.debug && !RECORD_ALWAYS && heap_here) {
		if (small::init())
			allocinfo__inline_v1.small_max = small::MAX;
		else
			log_message("cannot reserve address space for the small-block heap; "
				    "every counted block is glibc's");
	}
	registry_init();
	__atomic_store_n(&g_fast.state, STATE_RUNNING, __ATOMIC_RELEASE);
	update_fast_paths();
}

} /* namespace */

/* Debugging takes the slow path, which checks every pointer; so do registered user
 * callbacks, which run there, and a started sampling profiler (callbacks::armed()
 * tests both). A lock orders start-up against the first callback's registration, so
 * that neither undoes the other. */
void update_fast_paths()
{
	static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	pthread_mutex_lock(&lock);
	if (__atomic_load_n(&g_fast.state, __ATOMIC_ACQUIRE) == STATE_RUNNING && !g_fast.debug) {
		bool open = !callbacks::armed();
		uint32_t plain = open && !RECORD_ALWAYS && !backend::g_foreign_flag;
		__atomic_store_n(&g_fast.plain_when_off, plain, __ATOMIC_RELAXED);
		__atomic_store_n(&allocinfo__inline_v1.plain, plain, __ATOMIC_RELAXED);
		/* Over another allocator, the library's fast path allocates from it
		 * (backend.h) when it comes after us; the header's inline path never. */
		const uint32_t *go = open && backend::g_fast_path ? g_fast.enabled : &g_stop;
		__atomic_store_n(&g_fast.go, go, __ATOMIC_RELEASE);
		bool lean = open && backend::g_underneath == backend::underneath::first &&
			    !backend::g_sanitizer;
		__atomic_store_n(&g_foreign_go, lean ? g_fast.enabled : &g_stop, __ATOMIC_RELEASE);
		if (!RECORD_ALWAYS)
			__atomic_store_n(&allocinfo__inline_v1.go,
					 glibc_underneath() ? go : &g_stop, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&lock);
}

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
#ifdef ALLOCINFO_BACKEND_NEXT
	/* A thread's first allocation, inside the sanitizer's thread start-up, must not
	 * be the one that finds the unwinder (with dlopen, which it intercepts). */
	prepare_unwinder();
#endif
	if (__atomic_load_n(&g_fast.state, __ATOMIC_ACQUIRE) == STATE_RUNNING) {
		pthread_atfork(fork_prepare, fork_parent, fork_child);
		atexit(on_exit);
		store_bpf_ready();
	}
	rcu::adopt_loaded();
	callbacks::load_from_environment();
	pprof_profiler::start_from_environment();
}
