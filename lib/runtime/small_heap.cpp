/* SPDX-License-Identifier: MIT */
/* The small-block heap's slower half: the address range, spans and their pool,
 * refilling and flushing caches, purging, misuse reports (small_heap.h). */
#include "small_heap.h"

#include <algorithm>
#include <errno.h>
#include <stdlib.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <time.h>

#include "futex_lock.h"
#include "introspection.h"
#include "table_pages.h"
#include "thread_shard.h"

#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0x100000
#endif

namespace allocinfo {
namespace small {

__thread thread_cache t_cache __attribute__((tls_model("initial-exec")));

namespace {

constexpr uint32_t NONE = UINT32_MAX;

/* Which list a span is on. */
enum where : uint8_t {
	IN_USE,		/* its class's, every slot out: on no list */
	PARTIAL,	/* its class's, with a slot to give */
	EMPTY,		/* the pool's, memory still resident */
	PURGED,		/* the pool's, memory given back */
	ASIDE,		/* a forked child's, whose lock was held at fork: never reused */
};

/* A span's bookkeeping, in the span table below the heap (never in the span: a purge
 * would wipe it, and the program can write there). */
struct span {
	void *free;		/* its free slots, linked as a cache's are; or null */
	uint32_t next, prev;	/* neighbours on its list */
	uint16_t used;		/* slots out: live, or in a cache */
	uint16_t carved;	/* slots [0, carved) were handed out since it joined its class */
	uint8_t cls;		/* as in the class table */
	uint8_t on;		/* enum where */
	uint8_t purged_late;	/* purged for its age, not by malloc_trim() */
	uint32_t emptied_ms;	/* when it came back to the pool; purged: when purged */
};
static_assert(sizeof(span) == 32, "the span table is 32 bytes a span");

constexpr size_t SPAN_TABLE = MAX_SPANS * sizeof(span);
constexpr size_t TABLES = SPAN_TABLE + MAX_SPANS;	/* then the class table */

struct list {
	uint32_t head, tail;
};

/*
 * Lock order: a class's lock, then the pool's. Each guards its lists and counts;
 * the class table is written under both (a span changes hands) and read by free()
 * without either: a slot is only ever freed while its span belongs to its class.
 */
struct alignas(64) class_state {
	futex_lock lock;
	list partial;		/* spans with a free or never-used slot */
	size_t out;		/* slots out of its spans (in caches and batches too) */
	size_t spans;		/* spans it holds */
	void *batches;		/* whole batches flushed by caches, for the next refill */
	unsigned n_batches;
};

/* Each time the heap has made this many spans resident again (new, or purged before),
 * the allocator underneath gives back its free pages (trim_underneath()). Two heaps
 * in one process each keep freed memory: glibc its holes below the top of its arena,
 * where only it can reuse them, this heap its spans. A program whose large blocks
 * peak in one phase and whose small ones peak in another would otherwise be resident
 * for the sum of both peaks (jq's test suite: 17.6 MiB, against 14.7 MiB with glibc
 * serving everything). A trim walks every free chunk glibc has: usually far less work
 * than faulting in a MiB, but 3 ms with 100,000 of them. So trims spend from a
 * budget that grows by 1/TRIM_SHARE of the time that passes, up to TRIM_BURST_NS: they
 * take about 2% of the time at most, and cheap ones are never held back. */
constexpr uint32_t TRIM_STEP = 64;
constexpr uint64_t TRIM_SHARE = 50;
constexpr int64_t TRIM_BURST_NS = 1000000;

/* The other way two peaks add up: large blocks freed to glibc leave holes below its
 * top, that small blocks would have reused in a run without this heap (a doubling
 * std::vector frees its old buffers below the new one). So blocks of LARGE_FREE bytes
 * and more are noted as they are freed (not those glibc mapped on their own: their
 * memory goes back as they are), and each TRIM_FREED bytes of them make a trim of the
 * holes due: malloc_trim() with a pad that keeps glibc's top, which glibc trims
 * itself as blocks are freed there, down to its trim threshold. Freeing the top as
 * well undid glibc's reuse of it: expat's test suite frees and makes its parsers'
 * buffers again and again at the top, and faulted them in again after each trim
 * (83,000 faults against 25,000 plain, three times the system time; 53,000 with the
 * top kept). */
constexpr size_t LARGE_FREE = 64 << 10;
constexpr size_t TRIM_FREED = 256 << 10;
constexpr size_t KEEP_TOP = (size_t)1 << 62;	/* a pad larger than any top */

/* The purge delay adapts to the program, as jemalloc's decay does in a fuller form. A
 * span purged and taken again soon after (within REGRET_WINDOW delays) cost a fault
 * per page for nothing: the program's phases come round more slowly than the delay
 * (an interpreter that builds, serialises and drops its data every two seconds
 * faulted its spans in again each round: theory-of-operation.md). Such a regret
 * doubles the delay, up to 2^MAX_DELAY_SHIFT times PURGE_DELAY_MS; a purged span
 * taken again only later halves it. Without either nothing changes it (no regret is
 * the delay working), so an empty span goes back 8 s after it was freed at most.
 * malloc_trim() purges at once, and its spans taken again count neither way. */
constexpr uint8_t MAX_DELAY_SHIFT = 4;
constexpr uint32_t REGRET_WINDOW = 4;

/* At most this many flushed batches wait per class (16 KiB of slots at most): beyond
 * them, slots go back to their spans. A batch moves between threads in one step, so
 * the common producer/consumer exchange and a program's churn take no walk; what
 * waits is given back to the spans by malloc_trim(). */
constexpr unsigned MAX_WAITING = 8;

struct alignas(64) pool_state {
	futex_lock lock;
	list empty;		/* newest first: the next one handed out is warm */
	list purged;
	uint32_t n_empty, n_purged;
	uint64_t taken;		/* spans handed to a class, ever: for malloc_info */
	uint32_t top;		/* spans ever handed out: [0, top) */
	uint32_t mapped;	/* spans mapped: [0, mapped) */
	uint32_t grow_skip;	/* span requests to let by before trying to grow again */
	uint32_t resident_since_trim;	/* spans made resident since the last trim */
	uint8_t delay_shift;	/* atomic: the purge delay is PURGE_DELAY_MS << this */
	uint32_t delay_changed_ms;	/* when delay_shift last changed */
	uint64_t purge_regrets;	/* spans purged for their age and taken again soon */
	bool grow_blocked;	/* another mapping sits where the heap would grow */
	uint8_t trim_due;	/* atomic, TRIM_*: the next refill, outside the locks, trims */
	/* The trims' budget (trim_within_budget()), atomic: what it held at
	 * budget_at_ns (CLOCK_MONOTONIC; 0: never spent, a full budget). */
	int64_t trim_budget_ns;
	uint64_t budget_at_ns;
	uint64_t trims_done, trims_spaced_out, trims_ns;	/* for malloc_info */
	size_t freed_since_trim;	/* large blocks' bytes freed underneath, atomic */
};

char *g_base;
span *g_spans;
uint8_t *g_class_table;
class_state g_classes[CLASSES];
pool_state g_pool;

/* test_heap_memory's idle case stands on class 24's geometry (39 slots a span, 4 a
 * batch), and checks it first. */
constexpr uint8_t batch_for(unsigned c)
{
	size_t n = 2048 / stride(c);
	return (uint8_t)(n < 2 ? 2 : n > 32 ? 32 : n);
}
constexpr unsigned MAX_BATCH = 32;

/* What a trim due gives back: the holes below glibc's top, and the top too. */
constexpr uint8_t TRIM_HOLES = 1, TRIM_TOP = 2;

/* A trim of the allocator underneath is due, for the next refill, outside every lock
 * (trim_within_budget()). A request made while one is still due is merged into it:
 * counted as spaced out. */
void request_trim(uint8_t what)
{
	if (__atomic_fetch_or(&g_pool.trim_due, what, __ATOMIC_RELAXED))
		__atomic_add_fetch(&g_pool.trims_spaced_out, 1, __ATOMIC_RELAXED);
}

uint32_t now_ms()
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (uint32_t)((uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000);
}

uint32_t span_index(const void *p)
{
	return (uint32_t)(((uintptr_t)p - (uintptr_t)g_base) >> SPAN_SHIFT);
}

char *span_start(uint32_t i)
{
	return g_base + (size_t)i * SPAN;
}

void list_push(list &l, uint32_t i)
{
	span &s = g_spans[i];
	s.prev = NONE;
	s.next = l.head;
	if (l.head != NONE)
		g_spans[l.head].prev = i;
	else
		l.tail = i;
	l.head = i;
}

void list_remove(list &l, uint32_t i)
{
	span &s = g_spans[i];
	if (s.prev != NONE)
		g_spans[s.prev].next = s.next;
	else
		l.head = s.next;
	if (s.next != NONE)
		g_spans[s.next].prev = s.prev;
	else
		l.tail = s.prev;
}

/* "malloc(): ...; aborting": a link in a free list decoded to an address outside
 * the heap (or its span), so a freed block was written to. */
[[noreturn]] void bad_link(const void *slot, const void *link)
{
	if (slot)
		log_message("malloc(): the free block %p was written to after free (its link "
			    "reads %p); aborting", slot, link);
	else
		log_message("malloc(): a free block was written to after free (a link reads "
			    "%p); aborting", link);
	abort();
}

/* Maps the next step of the heap; under the pool's lock. */
bool grow()
{
	if (g_pool.grow_blocked || g_pool.mapped >= MAX_SPANS)
		return false;
	if (g_pool.grow_skip) {	/* the limit was reached: try again now and then */
		g_pool.grow_skip--;
		return false;
	}
	size_t spans = GROW / SPAN;
	if (spans > MAX_SPANS - g_pool.mapped)
		spans = MAX_SPANS - g_pool.mapped;
	char *want = span_start(g_pool.mapped);
	int saved = errno;
	void *got = mmap(want, spans * SPAN, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED_NOREPLACE, -1, 0);
	bool taken = got == MAP_FAILED && errno == EEXIST;
	errno = saved;
	if (got == MAP_FAILED) {
		if (taken)
			g_pool.grow_blocked = true;
		else
			g_pool.grow_skip = 64;
		return false;
	}
	if (got != want) {	/* a kernel without MAP_FIXED_NOREPLACE, and someone there */
		munmap(got, spans * SPAN);
		g_pool.grow_blocked = true;
		return false;
	}
	g_pool.mapped += (uint32_t)spans;
	__atomic_store_n(&g_fast.small_len, (uintptr_t)g_pool.mapped * SPAN, __ATOMIC_RELEASE);
	return true;
}

/* Empty spans are given back this many at a time, their indexes sorted in a page of
 * the pool's (not on the stack of a malloc() whose thread may have PTHREAD_STACK_MIN
 * bytes). Fewer find fewer neighbours: make bench's phase-change trim took 36-53 ms
 * 128 at a time, 10-13 ms 1,024 at a time. */
constexpr unsigned PURGE_BATCH = 1024;
uint32_t g_purge_batch[PURGE_BATCH];	/* under the pool's lock */

/* Under the pool's lock: the empty spans that have waited at least min_age ms go back
 * to the system, the oldest first; late: for their age, not by malloc_trim(). One
 * madvise() a run of adjacent spans, not one a span: each call costs far more than
 * its pages (105 MB of spans took 120 ms a span at a time, 5 ms in one call), and the
 * lock is held meanwhile. A span's purge time is taken once its memory is gone, so
 * that a purge slowed down by a busy machine is not counted as older than it is
 * (note_taken_purged()). */
void purge_older(uint32_t now, uint32_t min_age, bool late)
{
	uint32_t *batch = g_purge_batch;
	for (;;) {
		unsigned n = 0;
		for (uint32_t i = g_pool.empty.tail;
		     i != NONE && n < PURGE_BATCH && now - g_spans[i].emptied_ms >= min_age;
		     i = g_pool.empty.tail) {
			list_remove(g_pool.empty, i);
			g_pool.n_empty--;
			list_push(g_pool.purged, i);	/* the list is in the span table */
			g_pool.n_purged++;
			batch[n++] = i;
		}
		if (!n)
			return;
		std::sort(batch, batch + n);
		for (unsigned a = 0, b; a < n; a = b) {
			for (b = a + 1; b < n && batch[b] == batch[b - 1] + 1; b++)
				;
			madvise(span_start(batch[a]), (b - a) * SPAN, MADV_DONTNEED);
		}
		uint32_t done = now_ms();
		for (unsigned k = 0; k < n; k++) {
			span &s = g_spans[batch[k]];
			s.on = PURGED;
			s.purged_late = late;
			s.emptied_ms = done;
		}
	}
}

uint32_t purge_delay_ms()
{
	return PURGE_DELAY_MS << __atomic_load_n(&g_pool.delay_shift, __ATOMIC_RELAXED);
}

/* Under the pool's lock: the delay steps up or down (MAX_DELAY_SHIFT above). */
void set_delay_shift(uint8_t shift, uint32_t now)
{
	__atomic_store_n(&g_pool.delay_shift, shift, __ATOMIC_RELAXED);
	g_pool.delay_changed_ms = now;
}

/* Under the pool's lock: purged span i is taken again. Soon after its purge, a
 * regret: the delay doubles. Long after, the purge was right: the delay halves. One
 * step a delay at most either way: the spans of one phase, taken again together, are
 * one piece of evidence. */
void note_taken_purged(uint32_t i, uint32_t now)
{
	const span &s = g_spans[i];
	if (!s.purged_late)
		return;
	uint32_t delay = purge_delay_ms();
	bool regret = now - s.emptied_ms < REGRET_WINDOW * delay;
	if (regret)
		g_pool.purge_regrets++;
	if (now - g_pool.delay_changed_ms < delay)
		return;
	if (regret && g_pool.delay_shift < MAX_DELAY_SHIFT)
		set_delay_shift((uint8_t)(g_pool.delay_shift + 1), now);
	else if (!regret && g_pool.delay_shift)
		set_delay_shift((uint8_t)(g_pool.delay_shift - 1), now);
}

/* Under the pool's lock: spans empty for the purge delay go back to the system. */
void purge_expired(uint32_t now)
{
	purge_older(now, purge_delay_ms(), true);
}

/* Now and then, off the fast path: spans empty long enough go back to the system
 * even when the pool is not used (a program that freed much and now only reuses its
 * caches). The oldest span's age is read without the lock first. */
void maybe_purge()
{
	if (++t_cache.batches % 64)
		return;
	uint32_t i = __atomic_load_n(&g_pool.empty.tail, __ATOMIC_RELAXED);
	if (i == NONE || now_ms() - g_spans[i].emptied_ms < purge_delay_ms())
		return;
	g_pool.lock.lock();
	purge_expired(now_ms());
	g_pool.lock.unlock();
}

/* A span for class c from the pool: a resident empty one, then a purged one, then one
 * never used; NONE when the heap can have no more. */
[[gnu::noinline]] uint32_t take_span(unsigned c)
{
	g_pool.lock.lock();
	uint32_t i = NONE;
	if ((i = g_pool.empty.head) != NONE) {
		list_remove(g_pool.empty, i);
		g_pool.n_empty--;
		purge_expired(now_ms());
	} else {
		if ((i = g_pool.purged.head) != NONE) {
			list_remove(g_pool.purged, i);
			g_pool.n_purged--;
			note_taken_purged(i, now_ms());
		} else if (g_pool.top < g_pool.mapped || grow()) {
			i = g_pool.top++;
		}
		if (i != NONE && ++g_pool.resident_since_trim >= TRIM_STEP) {
			g_pool.resident_since_trim = 0;
			request_trim(TRIM_HOLES | TRIM_TOP);
		}
	}
	if (i != NONE) {
		g_pool.taken++;
		span &s = g_spans[i];
		s.free = nullptr;
		s.used = 0;
		s.carved = 0;
		s.cls = (uint8_t)c;
		__atomic_store_n(&g_class_table[i], (uint8_t)c, __ATOMIC_RELEASE);
	}
	g_pool.lock.unlock();
	return i;
}

/* Span i, empty, goes back to the pool. */
[[gnu::noinline]] void give_span(uint32_t i)
{
	g_pool.lock.lock();
	span &s = g_spans[i];
	s.cls = NO_CLASS;
	__atomic_store_n(&g_class_table[i], NO_CLASS, __ATOMIC_RELEASE);
	uint32_t now = now_ms();
	s.on = EMPTY;
	s.emptied_ms = now;
	list_push(g_pool.empty, i);
	g_pool.n_empty++;
	purge_expired(now);
	g_pool.lock.unlock();
}

/* Under class c's lock: up to n slots from its spans, linked as a cache's list from
 * *head; returns how many. */
unsigned take_slots(unsigned c, unsigned n, void **head)
{
	class_state &k = g_classes[c];
	void *list = nullptr;
	unsigned got = 0;
	const unsigned cap = slots_per_span(c);
	const uint32_t freed = FREED_WORD;
	while (got < n) {
		uint32_t i = k.partial.head;
		if (i == NONE) {
			if ((i = take_span(c)) == NONE)
				break;
			k.spans++;
			g_spans[i].on = PARTIAL;
			list_push(k.partial, i);
		}
		span &s = g_spans[i];
		char *start = span_start(i);
		while (got < n && s.free) {
			void *p = s.free;
			void *next = encode_link(*static_cast<void **>(p), p);
			if (next && (uintptr_t)next - (uintptr_t)start >= SPAN)
				bad_link(p, next);
			s.free = next;
			*static_cast<void **>(p) = encode_link(list, p);
			list = p;
			got++;
			s.used++;
		}
		for (; got < n && s.carved < cap; got++, s.used++) {
			char *p = start + (size_t)s.carved++ * stride(c);
			/* Whatever a former class left here must not pass for a live trailer. */
			__builtin_memcpy(trailer_of(p, c), &freed, sizeof(freed));
			*reinterpret_cast<void **>(p) = encode_link(list, p);
			list = p;
		}
		if (!s.free && s.carved == cap) {
			list_remove(k.partial, i);
			s.on = IN_USE;
		}
	}
	k.out += got;
	*head = list;
	return got;
}

/* Under class c's lock: slot p back to its span; an empty span to the pool. */
inline __attribute__((always_inline)) void return_slot(unsigned c, void *p)
{
	class_state &k = g_classes[c];
	uint32_t i = span_index(p);
	span &s = g_spans[i];
	*static_cast<void **>(p) = encode_link(s.free, p);
	s.free = p;
	s.used--;
	k.out--;
	if (s.on == ASIDE)
		return;
	if (s.used == 0) {
		if (s.on == PARTIAL)
			list_remove(k.partial, i);
		k.spans--;
		give_span(i);
	} else if (s.on == IN_USE) {
		s.on = PARTIAL;
		list_push(k.partial, i);
	}
}

/* The next slot of this thread's cache of class c, its link checked. */
inline __attribute__((always_inline)) void *pop_checked(unsigned c)
{
	void *p = t_cache.head[c];
	if (!contains(p, g_fast.small_base))
		bad_link(nullptr, p);
	t_cache.head[c] = encode_link(*static_cast<void **>(p), p);
	t_cache.count[c]--;
	return p;
}

} /* namespace */

#define B4(f, c) f(c), f(c + 1), f(c + 2), f(c + 3)
#define B16(f, c) B4(f, c), B4(f, c + 4), B4(f, c + 8), B4(f, c + 12)
#define B64(f) B16(f, 0), B16(f, 16), B16(f, 32), B16(f, 48)

const uint8_t g_batch[CLASSES] = { B64(batch_for) };

constexpr uint16_t cache_max(unsigned c)
{
	return (uint16_t)(2 * batch_for(c));
}
const uint16_t g_cache_max[CLASSES] = { B64(cache_max) };

constexpr uint64_t stride_inverse(unsigned c)
{
	/* For a power of two, ceil(2^64 / s) would be exact: one more keeps e nonzero. */
	return UINT64_MAX / stride(c) + 1 + ((stride(c) & (stride(c) - 1)) == 0);
}
constexpr uint64_t slot_limit(unsigned c)
{
	return (uint64_t)slots_per_span(c) * (uint64_t)(stride(c) * stride_inverse(c));
}
const uint64_t g_stride_inverse[256] = { B64(stride_inverse) };
const uint64_t g_slot_limit[256] = { B64(slot_limit) };
static_assert(slot_limit(0) < stride_inverse(CLASSES - 1) &&
	      slot_limit(CLASSES - 1) < stride_inverse(CLASSES - 1),
	      "no offset inside a slot passes for its start");

#undef B64
#undef B16
#undef B4

namespace {

/* The per-process key and canary: from the kernel, or else from AT_RANDOM's bytes
 * and the heap's address, mixed (never glibc's own guard values as they are). */
void choose_secrets(uintptr_t where)
{
	uint64_t r[2] = { 0, 0 };
	if (getrandom(r, sizeof(r), GRND_NONBLOCK) != (ssize_t)sizeof(r)) {
		const uint64_t *at = reinterpret_cast<const uint64_t *>(getauxval(AT_RANDOM));
		uint64_t x = (at ? at[0] ^ at[1] : 0) ^ where;
		for (uint64_t &v : r) {	/* splitmix64 */
			x += 0x9e3779b97f4a7c15ull;
			uint64_t z = x;
			z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
			z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
			v = z ^ (z >> 31);
		}
	}
	g_fast.small_key = (uintptr_t)r[0];
	g_fast.small_canary = ((uint32_t)r[1] & 0xffffu) | 0x0101u;	/* no zero byte */
}

} /* namespace */

bool init()
{
	/* Room for the tables and the whole heap, found once and then let go of: only the
	 * tables and the first step stay mapped. The heap grows into the rest, which
	 * other mappings fill from its far end. */
	const size_t whole = TABLES + MAX_SPANS * SPAN, first = TABLES + GROW;
	const int flags = MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE;
	void *at = mmap(nullptr, whole, PROT_NONE, flags, -1, 0);
	void *m = MAP_FAILED;
	if (at != MAP_FAILED) {
		munmap(at, whole);
		m = mmap(at, first, PROT_READ | PROT_WRITE, flags | MAP_FIXED_NOREPLACE, -1, 0);
		if (m != MAP_FAILED && m != at) {
			munmap(m, first);
			m = MAP_FAILED;
		}
	}
	if (m == MAP_FAILED)	/* a low RLIMIT_AS, or a busy address space */
		m = mmap(nullptr, first, PROT_READ | PROT_WRITE, flags, -1, 0);
	if (m == MAP_FAILED)
		return false;
	g_spans = static_cast<span *>(m);
	g_class_table = static_cast<uint8_t *>(m) + SPAN_TABLE;
	g_base = static_cast<char *>(m) + TABLES;
	/* The class table is left zero, not NO_CLASS: 256 KiB that stay untouched. A span
	 * never handed out then reads as class 0, and a free() into it still fails,
	 * on its zero trailer. */
	for (class_state &k : g_classes) {	/* the locks start free (futex_lock.h) */
		k.partial = { NONE, NONE };
		k.out = 0;
		k.spans = 0;
		k.batches = nullptr;
		k.n_batches = 0;
	}
	g_pool.empty = g_pool.purged = { NONE, NONE };
	g_pool.mapped = GROW / SPAN;
	choose_secrets((uintptr_t)m);
	g_fast.small_len = g_pool.mapped * SPAN;
	g_fast.small_end = MAX + 1;
	g_fast.large_free = LARGE_FREE;
	__atomic_store_n(&g_fast.small_base, (uintptr_t)g_base, __ATOMIC_RELEASE);
	return true;
}

/* Under class c's lock: every waiting batch of class c back to the spans. */
static void return_waiting_locked(unsigned c)
{
	class_state &k = g_classes[c];
	while (void **b = static_cast<void **>(k.batches)) {
		void *next = encode_link(b[1], &b[1]);
		unsigned n = (unsigned)(uintptr_t)b[2];
		if ((next && !contains(next, g_fast.small_base)) || n == 0 || n > MAX_BATCH)
			bad_link(b, next);
		k.batches = next;
		k.n_batches--;
		void *p = b;
		for (unsigned i = 0; i < n; i++) {
			void *link = encode_link(*static_cast<void **>(p), p);
			if (i + 1 < n && !contains(link, g_fast.small_base))
				bad_link(p, link);
			return_slot(c, p);
			p = link;
		}
	}
}

/*
 * With n slots just cut from this thread's cache: whether class c has gone idle and
 * sparse, all but about a batch of its slots out of the spans waiting or in this
 * cache, and its spans at most a quarter used. The slots kept back would then keep
 * every span from emptying: a program that builds and tears down a structure would
 * leave the class's spans to it alone, and the next phase, in other classes, would
 * need new ones (the C++ workload's peak: 20% above glibc's). A class whose slots
 * only pass from thread to thread (a producer and a consumer) holds few spans, and
 * keeps its batches. Other threads' caches are not counted: they are theirs. Read
 * without the lock too: a wrong guess costs a scan.
 */
static bool class_idle(unsigned c, unsigned n)
{
	const class_state &k = g_classes[c];
	size_t idle = (size_t)k.n_batches * g_batch[c] + t_cache.count[c] + n;
	size_t out = __atomic_load_n(&k.out, __ATOMIC_RELAXED);
	size_t spans = __atomic_load_n(&k.spans, __ATOMIC_RELAXED);
	return out <= idle + g_batch[c] && spans * slots_per_span(c) >= 4 * out;
}

/* Under class c's lock: its waiting batches and this thread's cache of it back to
 * the spans. */
static void drain_locked(unsigned c)
{
	return_waiting_locked(c);
	while (t_cache.count[c])
		return_slot(c, pop_checked(c));
}

/* Under class c's lock: a batch from its spans would take a new span. */
static bool span_wanted(unsigned c)
{
	const class_state &k = g_classes[c];
	uint32_t i = k.partial.head;
	if (i == NONE)
		return true;
	const span &s = g_spans[i];
	return s.next == NONE && slots_per_span(c) - s.used < g_batch[c];
}

/* Refills and flushes of a thread between two drains of its idle classes. A class
 * whose blocks leave it at once (grown by realloc, as Lua allocates) holds all its
 * slots in the cache and looks idle; drained at every refill that wanted a span, it
 * refilled at once from a span taken back from the pool, whose refill drained the
 * next such class: a drain, a span given and one taken at every refill, 2.3 times
 * glibc's instructions for realloc(NULL, n) grown to 96 bytes and freed. */
constexpr uint32_t RECLAIM_SPACING = 16;

/*
 * Class c needs a span and the pool has no resident empty one: the idle classes'
 * slots in this thread's cache go back first. The slots the last frees of a class
 * left in the cache, after it went idle, keep as many spans from the pool; a
 * single-threaded program would otherwise take new memory for its next phase while
 * they sit there. Once a span at most, and RECLAIM_SPACING batches apart, so the
 * scan costs nothing per allocation.
 */
static void reclaim_idle(unsigned c)
{
	if ((int32_t)(t_cache.batches - t_cache.reclaim_from) < 0)
		return;
	t_cache.reclaim_from = t_cache.batches + RECLAIM_SPACING;
	for (unsigned d = 0; d < CLASSES; d++) {
		if (d == c || !t_cache.count[d] || !class_idle(d, 0))
			continue;
		g_classes[d].lock.lock();
		if (class_idle(d, 0))
			drain_locked(d);
		g_classes[d].lock.unlock();
	}
}

/* The allocator underneath trims, when the budget allows (TRIM_SHARE): else the
 * trim stays due, for the first refill once it does. The thread that took trim_due
 * is here; a second one, come for a request made during the trim, can only misjudge
 * the budget. */
[[gnu::noinline]] static void trim_within_budget(uint8_t what)
{
	uint64_t start = monotonic_ns();
	uint64_t at = __atomic_load_n(&g_pool.budget_at_ns, __ATOMIC_RELAXED);
	int64_t budget = __atomic_load_n(&g_pool.trim_budget_ns, __ATOMIC_RELAXED);
	uint64_t grown = at ? (start - at) / TRIM_SHARE : (uint64_t)TRIM_BURST_NS;
	budget = grown >= (uint64_t)(TRIM_BURST_NS - budget) ? TRIM_BURST_NS
							      : budget + (int64_t)grown;
	if (budget <= 0) {
		__atomic_store_n(&g_pool.trim_budget_ns, budget, __ATOMIC_RELAXED);
		__atomic_store_n(&g_pool.budget_at_ns, start, __ATOMIC_RELAXED);
		__atomic_fetch_or(&g_pool.trim_due, what, __ATOMIC_RELAXED);
		return;
	}
	__atomic_add_fetch(&g_pool.trims_done, 1, __ATOMIC_RELAXED);
	trim_underneath(what & TRIM_TOP ? 0 : KEEP_TOP);
	uint64_t end = monotonic_ns();
	__atomic_add_fetch(&g_pool.trims_ns, end - start, __ATOMIC_RELAXED);
	__atomic_store_n(&g_pool.trim_budget_ns, budget - (int64_t)(end - start), __ATOMIC_RELAXED);
	__atomic_store_n(&g_pool.budget_at_ns, end, __ATOMIC_RELAXED);
}

void freed_underneath(size_t size) noexcept
{
	size_t total = __atomic_add_fetch(&g_pool.freed_since_trim, size, __ATOMIC_RELAXED);
	if (total >= TRIM_FREED) {
		__atomic_store_n(&g_pool.freed_since_trim, 0, __ATOMIC_RELAXED);
		request_trim(TRIM_HOLES);
	}
}

void *refill(unsigned c)
{
	if (t_cache.head[c])	/* not null, yet not in the heap */
		bad_link(nullptr, t_cache.head[c]);
	/* Only a thread whose exit hook will empty its cache may keep one; and a cache
	 * only fills when the heap exists. */
	if (!thread_shard() || g_fast.small_base == NO_BASE)
		return nullptr;
	void *first;
	unsigned n;
	class_state &k = g_classes[c];
	k.lock.lock();
	/* This refill will take a span, and the pool has no resident empty one: first
	 * the idle classes' slots (reclaim_idle() takes their locks, so not with this
	 * one held). A partial span too short for the batch counts: take_slots() then
	 * takes a new one to finish it (jq's suite grew by 40 spans so, each kept by a
	 * few cached slots of an idle class). */
	if (!k.batches && span_wanted(c) && __atomic_load_n(&g_pool.n_empty, __ATOMIC_RELAXED) == 0) {
		k.lock.unlock();
		reclaim_idle(c);
		k.lock.lock();
	}
	if (void **b = static_cast<void **>(k.batches)) {	/* a waiting batch, whole */
		void *next = encode_link(b[1], &b[1]);
		n = (unsigned)(uintptr_t)b[2];
		if ((next && !contains(next, g_fast.small_base)) || n == 0 || n > MAX_BATCH)
			bad_link(b, next);
		k.batches = next;
		k.n_batches--;
		first = b;
	} else {
		n = take_slots(c, g_batch[c], &first);
	}
	k.lock.unlock();
	maybe_purge();
	/* Read without the lock: a trim missed waits for the next refill. */
	if (unlikely(__atomic_load_n(&g_pool.trim_due, __ATOMIC_RELAXED)))
		if (uint8_t what = __atomic_exchange_n(&g_pool.trim_due, 0, __ATOMIC_RELAXED))
			trim_within_budget(what);
	if (unlikely(__atomic_load_n(&g_tables_waiting, __ATOMIC_RELAXED)))
		give_back_waiting_tables();
	if (!n)
		return nullptr;
	/* One for the caller, the rest for the cache, which is empty. */
	t_cache.head[c] = encode_link(*static_cast<void **>(first), first);
	t_cache.count[c] = (uint16_t)(n - 1);
	return first;
}

/* The cache's first n slots as a batch: waiting for the next refill of any thread
 * when there is room, else back to their spans; and when the class has gone idle,
 * everything it keeps back, so that its spans can empty. */
static void give_back(unsigned c, unsigned n)
{
	/* Cut from the rest; the first slot's second and third words then link the
	 * waiting batches and say how many. */
	void *first = t_cache.head[c];
	void *last = pop_checked(c);
	for (unsigned i = 1; i < n; i++)
		last = pop_checked(c);
	class_state &k = g_classes[c];
	k.lock.lock();
	bool idle = class_idle(c, n);
	if (!idle && k.n_batches < MAX_WAITING) {
		*static_cast<void **>(last) = encode_link(nullptr, last);
		void **b = static_cast<void **>(first);
		b[1] = encode_link(k.batches, &b[1]);
		b[2] = reinterpret_cast<void *>((uintptr_t)n);
		k.batches = b;
		k.n_batches++;
		k.lock.unlock();
		maybe_purge();
		return;
	}
	for (void *p = first;; ) {	/* the links were checked as they were popped */
		void *next = encode_link(*static_cast<void **>(p), p);
		return_slot(c, p);
		if (p == last)
			break;
		p = next;
	}
	if (idle)
		drain_locked(c);
	k.lock.unlock();
	maybe_purge();
}

void flush(unsigned c)
{
	give_back(c, g_batch[c]);
}

static void return_waiting(unsigned c)
{
	g_classes[c].lock.lock();
	return_waiting_locked(c);
	g_classes[c].lock.unlock();
}

void release_to_span(void *p, unsigned c)
{
	g_classes[c].lock.lock();
	return_slot(c, p);
	g_classes[c].lock.unlock();
}

void thread_exit()
{
	if (g_fast.small_base == NO_BASE)
		return;
	for (unsigned c = 0; c < CLASSES; c++)
		while (unsigned n = t_cache.count[c])
			give_back(c, n < g_batch[c] ? n : g_batch[c]);
}

void fork_child()
{
	if (g_fast.small_base == NO_BASE)
		return;
	/* A lock held at fork: its holder was halfway through a change. */
	/* Only a held lock is written: the classes' pages stay shared with the parent. */
	for (unsigned c = 0; c < CLASSES; c++) {
		class_state &k = g_classes[c];
		if (!k.lock.held())
			continue;
		k.partial = { NONE, NONE };
		k.batches = nullptr;
		k.n_batches = 0;
		for (uint32_t i = 0; i < g_pool.top; i++)
			if (g_class_table[i] == c)
				g_spans[i].on = ASIDE;
		k.lock.reset();
	}
	if (g_pool.lock.held()) {
		g_pool.empty = g_pool.purged = { NONE, NONE };
		g_pool.n_empty = g_pool.n_purged = 0;
		g_pool.lock.reset();
	}
}

bool trim()
{
	if (g_fast.small_base == NO_BASE)
		return false;
	thread_exit();	/* this thread's cache; other threads' stay theirs */
	for (unsigned c = 0; c < CLASSES; c++)
		return_waiting(c);
	g_pool.lock.lock();
	bool any = g_pool.empty.tail != NONE;
	purge_older(now_ms(), 0, false);
	g_pool.lock.unlock();
	return any;
}

usage usage_now()
{
	usage u = {};
	if (g_fast.small_base == NO_BASE)
		return u;
	for (unsigned c = 0; c < CLASSES; c++) {
		size_t out = __atomic_load_n(&g_classes[c].out, __ATOMIC_RELAXED);
		size_t mine = t_cache.count[c];
		u.in_use += (out > mine ? out - mine : 0) * stride(c);
	}
	g_pool.lock.lock();
	u.spans_empty = g_pool.n_empty;
	u.spans_purged = g_pool.n_purged;
	u.spans_in_classes = g_pool.top - g_pool.n_empty - g_pool.n_purged;
	u.spans_taken = g_pool.taken;
	u.purge_delay_ms = purge_delay_ms();
	u.purge_regrets = g_pool.purge_regrets;
	g_pool.lock.unlock();
	u.mapped = (u.spans_in_classes + u.spans_empty) * SPAN;
	u.trims_done = __atomic_load_n(&g_pool.trims_done, __ATOMIC_RELAXED);
	u.trims_spaced_out = __atomic_load_n(&g_pool.trims_spaced_out, __ATOMIC_RELAXED);
	u.trims_ns = __atomic_load_n(&g_pool.trims_ns, __ATOMIC_RELAXED);
	return u;
}

void report_bad_slot(void *p, const char *what)
{
	uintptr_t base = g_fast.small_base;
	unsigned c = class_at(p, base);
	const char *problem;
	if (c == NO_CLASS) {
		problem = "not a block: never allocated";
	} else if (!slot_start(p, base, c)) {
		problem = "not the start of a block";
	} else if (((uintptr_t)p - base) % SPAN / stride(c) >= g_spans[span_index(p)].carved) {
		problem = "not a block: never allocated";
	} else {
		uint32_t w;
		__builtin_memcpy(&w, trailer_of(p, c), sizeof(w));
		problem = w == FREED_WORD ? "not allocated: a double free, or never handed out"
					    : "the 8 bytes after the block were overwritten "
					      "(a heap buffer overflow)";
	}
	log_message("%s(%p): %s; aborting", what, p, problem);
	abort();
}

} /* namespace small */
} /* namespace allocinfo */
