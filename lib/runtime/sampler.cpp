/* SPDX-License-Identifier: MIT */
/*
 * The sampling heap profiler: attach, start, stop, snapshot and detach; the sampling
 * decision; sampled blocks and the calls into the profiler; allocinfo_tag_info().
 *
 * The attached profiler is one immutable object published under RCU (liburcu-bp, as
 * the callbacks chain): every call into it runs inside a read-side section with the
 * thread's callbacks guard set (so its own allocations are never sampled and call no
 * user callback), and detach publishes null and waits for a grace period, after which
 * no thread is in a callback or can enter one. Each attach has a generation, kept in
 * every block it sampled: a block sampled for a profiler since detached calls nothing.
 */
#include "sampler.h"

#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "alloc.h"
#include "bound_at_load.h"
#include "rcu_published.h"
#include "registry.h"
#include "stack_trace.h"
#include "store.h"
#include "thread_shard.h"

namespace allocinfo {
namespace sampler {

/* Bumped by attach and in a forked child: threads then start their sampling over. */
uint32_t g_epoch = 1;
__thread thread_state t_state __attribute__((tls_model("initial-exec")));

namespace {

/* In front of a sampled block, at its base; the sample data follows. */
struct sample_header {
	uint32_t generation;	/* the attach that sampled it */
	uint32_t data_size;	/* its profiler's sample_data_size */
	uint64_t reserved;	/* 0; the distance back to the base is the record's shift */
};
static_assert(sizeof(sample_header) == 16, "sample data stays 16-byte aligned");

struct attached {
	allocinfo_profiler p;
	void *arg;
	uint32_t generation;
};

rcu_published<attached> g_prof;	/* null when none is attached */
pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;	/* attach, detach, start, stop */
pthread_mutex_t g_snapshot_lock = PTHREAD_MUTEX_INITIALIZER;
uint32_t g_generation;		/* g_lock: the last attach's */
size_t g_initial_rate;		/* the attached profiler's, for threads starting over */
__thread bool t_in_snapshot __attribute__((tls_model("initial-exec")));

/* A call into the profiler: the callbacks guard set, inside a read-side section. */
class section : public rcu_section<attached> {
public:
	section() noexcept : rcu_section<attached>(g_prof) {}
};

uint64_t splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* ln(x) for x in (0, 1], without libm: x = m * 2^e with m in [sqrt(1/2), sqrt(2)),
 * ln(m) = 2 atanh((m - 1) / (m + 1)) by its series (|t| < 0.172: the terms to t^19
 * leave an error below 1e-16). */
double natural_log(double x)
{
	uint64_t bits;
	memcpy(&bits, &x, sizeof(bits));
	int e = (int)((bits >> 52) & 0x7ff) - 1023;
	bits = (bits & ~(0x7ffull << 52)) | (1023ull << 52);
	double m;
	memcpy(&m, &bits, sizeof(m));
	if (m > 1.4142135623730951) {
		m *= 0.5;
		e++;
	}
	double t = (m - 1) / (m + 1), t2 = t * t, sum = 0;
	for (int k = 19; k >= 1; k -= 2)
		sum = sum * t2 + 1.0 / k;
	return e * 0.6931471805599453 + 2 * t * sum;
}

/* An exponential gap with mean rate bytes, at least 1. */
int64_t draw_gap(thread_state &t)
{
	/* u uniform in (0, 1]: 53 random bits, plus one so that it is never 0. */
	double u = (double)((splitmix64(&t.rng) >> 11) + 1) * (1.0 / 9007199254740992.0);
	double gap = -natural_log(u) * (double)t.rate;
	if (gap >= 9.2e18)
		return INT64_MAX;
	int64_t g = (int64_t)gap;
	return g < 1 ? 1 : g + ((double)g < gap);
}

void start_over(thread_state &t, uint32_t epoch)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	t.rng = (uint64_t)gettid() << 32 ^ (uint64_t)ts.tv_nsec ^ (uint64_t)ts.tv_sec << 40 ^
		(uint64_t)(uintptr_t)&t;
	splitmix64(&t.rng);
	t.rate = __atomic_load_n(&g_initial_rate, __ATOMIC_RELAXED);
	if (!t.rate)
		t.rate = ALLOCINFO_PROFILE_DEFAULT_RATE;
	t.left = t.rate <= 1 ? 0 : draw_gap(t);
	t.since = 0;
	t.epoch = epoch;
}

void set_rate(thread_state &t, size_t rate)
{
	if (!rate || rate == t.rate)
		return;
	t.rate = rate;
	t.left = rate <= 1 ? 0 : draw_gap(t);
}

size_t round_up_pow2(size_t n)
{
	return n <= 1 ? 1 : (size_t)1 << (64 - __builtin_clzl(n - 1));
}

sample_header *header_of(void *p)
{
	size_t d = (size_t)1 << ((record_of(p)->meta & RECORD_SHIFT_MASK) >> 8);
	return reinterpret_cast<sample_header *>(static_cast<char *>(p) - d);
}

uint32_t slot_of_site(callbacks::site s)
{
	return s.tag ? slot_for_site(s.tag) : slot_for_caller(s.ra);
}

/* As the slow halves allocate without a profiler. */
[[gnu::noinline]] void *allocate_unsampled(slow_plan plan, uint32_t slot, size_t n,
					    size_t align, size_t reserve, bool zero)
{
	bool aligned = align || reserve > n;
	switch (plan.mode) {
	case how::never:
	case how::off:
		if (aligned)
			return backend::memalign_plain(align ? align : 16, reserve > n ? reserve : n);
		return zero ? backend::calloc_plain(1, n) : backend::malloc_plain(n);
	case how::discard:
		slot = ALLOCINFO_TAG_DISCARD;
		break;
	case how::counted:
		break;
	}
	if (!aligned)
		return allocate_flagged(slot, n, zero, plan.flags);
	return allocate_aligned(slot, align, n, reserve, plan.flags);
}


/* Publishes p (may be null); returns the profiler it replaces. g_lock held. */
attached *publish(attached *p)
{
	return g_prof.publish(p);
}

/* Waits until no thread can still be in a callback of a profiler no longer
 * published. Without g_lock: a callback may start or stop the profiler. */
void wait_for_readers()
{
	g_prof.wait_for_readers();
}

void arm(bool on)
{
	if (on)
		__atomic_fetch_or(&callbacks::g_armed, ARMED_PROFILER, __ATOMIC_ACQ_REL);
	else
		__atomic_fetch_and(&callbacks::g_armed, ~ARMED_PROFILER, __ATOMIC_ACQ_REL);
	update_fast_paths();
}

} /* namespace */

bool fits_in_place(void *p, size_t n, uint32_t flags)
{
	if (small::contains(p, g_fast.small_base) || !has_record(p))
		return false;
	uint32_t meta = record_of(p)->meta;
	/* reallocate_sampled()'s test: another allocator's block never stays */
	if (!(meta & RECORD_F_SAMPLED) || (meta & RECORD_F_MOVED) ||
	    ((meta ^ flags) & RECORD_F_FOREIGN))
		return false;
	return n <= usable_size(p);
}

bool take_slow(size_t n)
{
	thread_state &t = t_state;
	uint32_t epoch = __atomic_load_n(&g_epoch, __ATOMIC_RELAXED);
	if (unlikely(t.epoch != epoch))
		start_over(t, epoch);
	t.since += n;
	if (t.rate <= 1)
		return true;
	int64_t bytes = n > (size_t)INT64_MAX ? INT64_MAX : (int64_t)n;
	if (__builtin_sub_overflow(t.left, bytes, &t.left) || t.left <= 0) {
		t.left = draw_gap(t);	/* the next gap starts at this block's end */
		return true;
	}
	return false;
}

void *allocate(int, callbacks::site s, size_t n, size_t align, size_t reserve, bool zero)
{
	slow_plan plan = slow_mode();
	if (plan.mode != how::counted)
		return allocate_unsampled(plan, ALLOCINFO_TAG_DISCARD, n, align, reserve, zero);
	uint32_t slot = slot_of_site(s);
	if (started() && take(reserve > n ? reserve : n))
		return allocate_sampled(s, slot, n, align, reserve, zero, plan.flags);
	if (likely(!align && reserve <= n && !(plan.flags & RECORD_F_FOREIGN)))
		return allocinfo::allocate(slot, n, zero, plan.flags);	/* the fast path's */
	return allocate_unsampled(plan, slot, n, align, reserve, zero);
}

void *reallocate(callbacks::site s, void *p, size_t n)
{
	slow_plan plan = slow_mode();
	if (plan.mode == how::never)
		return backend::realloc_plain(p, n);
	if (!p)
		return sampler::allocate(ALLOCINFO_OP_MALLOC, s, n, 0, 0, false);
	if (n == 0) {
		allocinfo::release(p);
		return nullptr;
	}
	if (plan.mode == how::off)
		return reallocate_off(p, n);
	uint32_t slot = plan.mode == how::discard ? ALLOCINFO_TAG_DISCARD : slot_of_site(s);
	if (plan.mode == how::counted && started() && !fits_in_place(p, n, plan.flags) && take(n)) {
		/* A new sampled block for the new size, as a move would make. */
		void *q = allocate_sampled(s, slot, n, 0, 0, false, plan.flags);
		if (!q)
			return nullptr;
		size_t old = usable_size(p);
		memcpy(q, p, old < n ? old : n);
		allocinfo::release(p);
		return q;
	}
	return allocinfo::reallocate(slot, p, n, plan.flags);
}

void *allocate_sampled(callbacks::site s, uint32_t slot, size_t n, size_t align,
		       size_t reserve, bool zero, uint32_t flags)
{
	section sec;
	const attached *a = sec.get();
	if (!a) {	/* detached meanwhile */
		if (!align && reserve <= n)
			return allocate_flagged(slot, n, zero, flags);
		return allocate_aligned(slot, align, n, reserve, flags);
	}
	size_t data = a->p.sample_data_size;
	if (align & (align - 1)) {
		if (align > ((size_t)1 << 63)) {
			errno = EINVAL;
			return nullptr;
		}
		align = round_up_pow2(align);
	}
	size_t dist = round_up_pow2(sizeof(sample_header) + data + sizeof(alloc_record));
	if (dist < align)
		dist = align;
	size_t body = reserve > n ? reserve : n, total;
	if (__builtin_add_overflow(body, dist, &total) || total > PTRDIFF_MAX) {
		errno = ENOMEM;
		return nullptr;
	}
	bool foreign = flags & RECORD_F_FOREIGN;
	char *base;
	if (align > sizeof(alloc_record))
		base = static_cast<char *>(foreign ? backend::foreign.memalign(align, total)
					   : backend::memalign(align, total));
	else
		base = static_cast<char *>(foreign ? backend::foreign.malloc(total)
					   : backend::malloc(total));
	if (!base)
		return nullptr;
	memset(base, 0, dist - sizeof(alloc_record));
	auto *h = reinterpret_cast<sample_header *>(base);
	h->generation = a->generation;
	h->data_size = (uint32_t)data;
	uint32_t shift = (uint32_t)__builtin_ctzl(dist);
	void *p = finish(reinterpret_cast<alloc_record *>(base + dist) - 1, slot, n,
			 RECORD_MAGIC | shift << 8 | RECORD_F_SAMPLED | flags);
	if (zero)
		memset(p, 0, n);

	int err = errno;	/* the walk and on_alloc leave the caller's errno alone */
	thread_state &t = t_state;
	void *frames[ALLOCINFO_PROFILE_FRAMES_MAX];
	allocinfo_sample smp;
	smp.block = p;
	smp.size = n;
	smp.sample_rate = t.rate;
	smp.bytes_since_last = (size_t)t.since;
	t.since = 0;
	smp.tag = slot;
	smp.nframes = stack_trace::capture(frames, ALLOCINFO_PROFILE_FRAMES_MAX, s.ra);
	smp.frames = frames;
	smp.sample_data = data ? base + sizeof(sample_header) : nullptr;
	size_t next = a->p.on_alloc ? a->p.on_alloc(a->arg, &smp) : 0;
	errno = err;
	set_rate(t, next);
	return p;
}

void released(void *p) noexcept
{
	sample_header *h = header_of(p);
	section sec;
	const attached *a = sec.get();
	if (!a || a->generation != h->generation || !a->p.on_free)
		return;
	int err = errno;
	a->p.on_free(a->arg, p, (size_t)record_of(p)->size,
		     h->data_size ? reinterpret_cast<char *>(h + 1) : nullptr);
	errno = err;
}

void *reallocate_sampled(uint32_t slot, void *p, size_t n, uint32_t flags)
{
	alloc_record *rec = record_of(p);
	uint32_t meta = rec->meta;
	if (!((meta ^ flags) & RECORD_F_FOREIGN) && n <= usable_size(p)) {
		size_t old_size = rec->size;
		uint32_t old_slot = record_slot(rec);
		bool was_counted = !(meta & RECORD_F_UNCOUNTED);
		bool counted = !(flags & RECORD_F_UNCOUNTED);
		if (was_counted && counted && old_slot == slot) {
			counter_add(slot, (int64_t)n - (int64_t)old_size, 0);
		} else {
			if (was_counted)
				counter_sub(old_slot, (int64_t)old_size, 1);
			if (counted)
				counter_add(slot, (int64_t)n, 1);
		}
		rec->size = n;
		rec->counter = counter_offset(slot);
		rec->meta = (meta & (RECORD_MAGIC_MASK | RECORD_SHIFT_MASK | RECORD_F_SAMPLED)) |
			    flags;
		sample_header *h = header_of(p);
		section sec;
		const attached *a = sec.get();
		if (a && a->generation == h->generation && a->p.on_realloc_inplace) {
			int err = errno;
			a->p.on_realloc_inplace(a->arg, p, old_size, n,
						h->data_size ? reinterpret_cast<char *>(h + 1)
							     : nullptr);
			errno = err;
		}
		return p;
	}
	void *q = allocate_flagged(slot, n, false, flags);
	if (!q)
		return nullptr;
	memcpy(q, p, rec->size < n ? rec->size : n);
	allocinfo::release(p);
	return q;
}

/* Around fork (init.cpp's handlers): attach, detach, start and stop wait. */
void fork_prepare()
{
	pthread_mutex_lock(&g_lock);
}

void fork_parent()
{
	pthread_mutex_unlock(&g_lock);
}

/* The child keeps the profiler and whether it is started; its thread starts sampling
 * over (a new random sequence: the parent's would repeat). */
void fork_child()
{
	/* Unlocked rather than made anew: the forking thread holds it, and checkers see
	 * a lock made anew as still held. */
	pthread_mutex_unlock(&g_lock);
	pthread_mutex_init(&g_snapshot_lock, nullptr);
	__atomic_store_n(&g_epoch, g_epoch + 1, __ATOMIC_RELAXED);
}

} /* namespace sampler */
} /* namespace allocinfo */

using namespace allocinfo;
using namespace allocinfo::sampler;

extern "C" EXPORT int allocinfo_profiler_attach(const struct allocinfo_profiler *p, void *arg)
{
	if (!p || p->reserved || p->sample_data_size > ALLOCINFO_PROFILE_SAMPLE_DATA_MAX)
		return -EINVAL;
	if (callbacks::t_inside)
		return -EDEADLK;
	ensure_init();
	if (__atomic_load_n(&g_fast.state, __ATOMIC_ACQUIRE) != STATE_RUNNING)
		return -ENOTSUP;	/* ALLOCINFO=never */
	if (!rcu::load())
		return -ELIBACC;	/* no liburcu-bp to publish the profiler with */
	stack_trace::prepare();
	attached *a;
	{
		busy_guard guard;
		a = static_cast<attached *>(malloc(sizeof(*a)));
	}
	if (!a)
		return -ENOMEM;
	a->p = *p;
	a->arg = arg;
	pthread_mutex_lock(&g_lock);
	if (g_prof.ptr) {
		pthread_mutex_unlock(&g_lock);
		busy_guard guard;
		free(a);
		return -EBUSY;
	}
	a->generation = ++g_generation;
	__atomic_store_n(&g_initial_rate, p->initial_sample_rate, __ATOMIC_RELAXED);
	__atomic_store_n(&g_epoch, g_epoch + 1, __ATOMIC_RELAXED);
	publish(a);
	pthread_mutex_unlock(&g_lock);
	return 0;
}

extern "C" EXPORT int allocinfo_profiler_detach(void)
{
	if (callbacks::t_inside)
		return -EDEADLK;	/* inside a read-side section */
	pthread_mutex_lock(&g_lock);
	if (!g_prof.ptr) {
		pthread_mutex_unlock(&g_lock);
		return -ENOENT;
	}
	arm(false);
	attached *old = publish(nullptr);
	pthread_mutex_unlock(&g_lock);
	wait_for_readers();
	busy_guard guard;
	free(old);
	return 0;
}

static int set_started(bool on)
{
	pthread_mutex_lock(&g_lock);
	int r = -ENOENT;
	if (g_prof.ptr) {
		arm(on);
		r = 0;
	}
	pthread_mutex_unlock(&g_lock);
	return r;
}

extern "C" EXPORT int allocinfo_profiler_start(void) { return set_started(true); }
extern "C" EXPORT int allocinfo_profiler_stop(void) { return set_started(false); }

extern "C" EXPORT int allocinfo_profiler_snapshot(void)
{
	if (t_in_snapshot)
		return -EDEADLK;
	pthread_mutex_lock(&g_snapshot_lock);
	t_in_snapshot = true;
	int r = -ENOENT;
	{
		section sec;
		const attached *a = sec.get();
		if (a) {
			if (a->p.on_snapshot)
				a->p.on_snapshot(a->arg);
			r = 0;
		}
	}
	t_in_snapshot = false;
	pthread_mutex_unlock(&g_snapshot_lock);
	return r;
}
