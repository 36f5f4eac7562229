/* SPDX-License-Identifier: MIT */
/*
 * The sampling heap profiler's core (allocinfo_profiler_*): which allocations are
 * sampled, the blocks that carry a sample, and the calls into the attached profiler.
 *
 * Cost when no profiler is started: nothing on the fast paths. Starting one sets the
 * ARMED_PROFILER bit of callbacks::g_armed, which points `go` (and the header's
 * inline state) at the stop word as registered callbacks do: every allocation then
 * reaches a slow half, whose one test of g_armed sends it to callbacks::allocate()
 * and, with no callback registered, on to sampler::allocate(): a per-thread byte
 * countdown, and for the allocations it does not pick, the same plain counted block
 * as without a profiler (the small-block heap included, so their free stays on the
 * fast path).
 *
 * Sampling is a Poisson process over each thread's allocated bytes: the gaps between
 * samples are exponential with mean `rate`, so a block of s bytes is sampled with
 * probability 1 - exp(-s/rate), independently of every other (Documentation/
 * sampling.md). Rate 1 samples every allocation.
 *
 * A sampled block keeps a header and the profiler's sample data in front of the
 * caller's pointer, at a power-of-two distance D, with the record just below the
 * pointer marked RECORD_F_SAMPLED and with log2(D) as its alignment shift: free,
 * realloc and malloc_usable_size find the block's base as for an aligned block, and
 * the record's flag sends its free out of line, to released().
 *
 *     base: [sample_header][sample data][pad][record] p: [caller's bytes]
 *           <------------------------ D -------------->
 */
#ifndef ALLOCINFO_SAMPLER_H
#define ALLOCINFO_SAMPLER_H

#include "callbacks.h"

namespace allocinfo {
namespace sampler {

/* The bit of callbacks::g_armed set while a profiler is started. */
constexpr uint32_t ARMED_PROFILER = 2;

static inline bool started()
{
	return __atomic_load_n(&callbacks::g_armed, __ATOMIC_ACQUIRE) & ARMED_PROFILER;
}

/* One thread's sampling state; starts over when g_epoch moves (an attach, a fork). */
struct thread_state {
	int64_t left;		/* bytes until the next sample; 0 at rate 1 */
	uint32_t epoch;
	uint64_t since;		/* bytes allocated since the last sample */
	uint64_t rng;
	size_t rate;
};
extern __thread thread_state t_state __attribute__((tls_model("initial-exec"))) HIDDEN;
extern uint32_t g_epoch HIDDEN;

/* take()'s other cases: a sample, rate 1, a new epoch. */
/* fork() handlers, called by init.cpp's in its order. */
void fork_prepare() HIDDEN;
void fork_parent() HIDDEN;
void fork_child() HIDDEN;

bool take_slow(size_t n) HIDDEN;

/* Counts n bytes allocated by this thread; true when this allocation is sampled. The
 * common case (no sample) inline: a compare and two adds. */
static inline bool take(size_t n)
{
	thread_state &t = t_state;
	if (likely(t.epoch == __atomic_load_n(&g_epoch, __ATOMIC_RELAXED) &&
		   n < (uint64_t)t.left)) {
		t.left -= (int64_t)n;
		t.since += n;
		return false;
	}
	return take_slow(n);
}

/* realloc(p, n) with record flags `flags` keeps the sampled block p in place: not a
 * new allocation to sample. */
bool fits_in_place(void *p, size_t n, uint32_t flags) HIDDEN;

/* An allocation while only the profiler is armed (op MALLOC, CALLOC, ALIGNED or NEW,
 * as callbacks::allocate()). */
void *allocate(int op, callbacks::site s, size_t n, size_t align, size_t reserve,
	       bool zero) HIDDEN;
/* realloc while only the profiler is armed. */
void *reallocate(callbacks::site s, void *p, size_t n) HIDDEN;

/* A sampled block of n bytes for tag `slot` with record flags `flags` (a plain one
 * when no profiler is attached any more); calls on_alloc. */
void *allocate_sampled(callbacks::site s, uint32_t slot, size_t n, size_t align,
		       size_t reserve, bool zero, uint32_t flags) HIDDEN;

/* free of sampled block p: calls on_free when its profiler is still attached. */
void released(void *p) noexcept HIDDEN;

/* realloc of sampled block p to n bytes (not 0) for slot with flags: in place, with
 * on_realloc_inplace, when it fits; else moved (null on failure). */
void *reallocate_sampled(uint32_t slot, void *p, size_t n, uint32_t flags) HIDDEN;

} /* namespace sampler */
} /* namespace allocinfo */

#endif
