/* SPDX-License-Identifier: MIT */
/*
 * User callbacks around allocation calls (allocinfo_callbacks_add()): the chain, run
 * under RCU, and the calls made with it.
 *
 * Cost when none is registered: nothing on the fast paths. Registering the first
 * callback points `go` (and the header's inline state) at the stop word, so that
 * every allocation leaves the fast path through the branch it already has; the slow
 * halves then call here. free() has no such branch: blocks made while callbacks are
 * registered carry RECORD_F_CALLBACKS (and never come from the small-block heap), so
 * that their record is not the plain one and their free takes the out-of-line path,
 * which calls here. A block counted on the fast path before the first registration
 * is freed there, without callbacks.
 *
 * A post callback may hand the caller a pointer q inside the block instead of the
 * block p (a header in front). The library then writes a mark, RECORD_F_MOVED with
 * the distance q - p, in the 16 bytes below q: free, realloc and
 * malloc_usable_size of q then find p even if no callback maps q back.
 */
#ifndef ALLOCINFO_CALLBACKS_H
#define ALLOCINFO_CALLBACKS_H

#include "internal.h"

namespace allocinfo {
namespace callbacks {

/* What sends allocations to the slow halves and on to allocate() below: bit
 * ARMED_CALLBACKS while at least one callback is registered, sampler::ARMED_PROFILER
 * while a profiler is started (sampler.h). */
extern uint32_t g_armed HIDDEN;
constexpr uint32_t ARMED_CALLBACKS = 1;
/* Set on a thread while it runs callbacks and the call they surround: allocations
 * made meanwhile are counted but call no callback. */
extern __thread bool t_inside __attribute__((tls_model("initial-exec"))) HIDDEN;

static inline bool armed()
{
	return unlikely(__atomic_load_n(&g_armed, __ATOMIC_ACQUIRE) != 0);
}

/* The slow halves' one test: callbacks or the profiler apply to this call (armed, not
 * from inside a callback, and not the library's own allocation: busy_guard). */
static inline bool wanted()
{
	return armed() && !t_inside && allocinfo__thread.override != &g_discard_tag;
}

/* The same for registered callbacks alone. */
static inline bool chain_wanted()
{
	return unlikely(__atomic_load_n(&g_armed, __ATOMIC_ACQUIRE) & ARMED_CALLBACKS) &&
	       !t_inside && allocinfo__thread.override != &g_discard_tag;
}

/* The call site of an allocation: its tag, or the caller's return address. */
struct site {
	const alloc_tag *tag;
	uintptr_t ra;
};

/* An allocation (op MALLOC, CALLOC, ALIGNED or NEW): pre callbacks, the allocation
 * (sampled when the profiler says so), post callbacks; with no callback registered,
 * the profiler's lean path (sampler::allocate()). reserve: pvalloc's whole pages.
 * s.ra is the program's return address also for a call with a tag, when known: the
 * sampler's stacks start there. */
void *allocate(int op, site s, size_t size, size_t align, size_t reserve, bool zero) HIDDEN;
void *reallocate(site s, void *p, size_t size) HIDDEN;
/* free or delete of p (not null). */
void release(void *p, int op) noexcept HIDDEN;
size_t usable_size(void *p) HIDDEN;

/* p is a pointer a post callback moved into its block (see above). */
bool is_moved(const void *p) HIDDEN;
/* malloc_usable_size() of such a pointer: the bytes from it to the block's end. */
size_t moved_usable_size(void *p) HIDDEN;

/* ALLOCINFO_CALLBACKS: loads the library and calls its allocinfo_callbacks_init(). */
void load_from_environment() HIDDEN;

} /* namespace callbacks */

/* Points `go` and the header's inline state where the process state, ALLOCINFO_DEBUG
 * and registered callbacks say (init.cpp). */
void update_fast_paths() HIDDEN;

} /* namespace allocinfo */

#endif
