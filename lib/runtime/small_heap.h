/* SPDX-License-Identifier: MIT */
/*
 * The library's own heap for small counted blocks: the userspace counterpart of the
 * kernel's slab, where the tag reference lives with the object instead of in front
 * of it.
 *
 * A counted request of at most MAX (1032) bytes takes a slot of one of 64 size
 * classes, of 32 + 16c bytes: the caller may use all but the last 8 bytes, which hold
 * the slot's trailer (a check value, the requested size and the tag's counter
 * offset). That is exactly glibc's footprint for the same request (its chunk header
 * is 8 bytes, and chunks are rounded to 16), so a counted small block costs no memory
 * beyond a plain one.
 *
 * Memory comes in spans of 16 KiB, cut into the slots of one class. A span goes to a
 * class when the class needs one, and back to a shared pool when its last slot is
 * freed; a span that stays empty in the pool for PURGE_DELAY_MS (longer while a
 * program takes its purged spans again soon after) is given back to the system
 * (MADV_DONTNEED) the next time the pool is used, and every empty span is at
 * once on malloc_trim(). So memory freed in one class serves every class. Blocks
 * larger than MAX are glibc's, and memory freed there serves only glibc: each time
 * the heap has faulted in another MiB of spans, glibc gives back the free pages it
 * holds (its malloc_trim), and each time 256 KiB of large blocks were freed, those
 * below its top, so that the two heaps' peaks do not add up.
 *
 * The heap is one range of address space that grows upwards in steps of GROW, up to
 * MAX_SPANS spans; below its first span lie the span table and the one-byte class of
 * each span. At start-up a probe finds room for all of it and keeps only the first
 * step, so the heap reserves little (a lowered RLIMIT_AS is no obstacle); when the
 * range cannot grow (the limit, or another mapping in the way), requests go to glibc.
 * free() knows these blocks by address alone (p - base below the mapped length), and
 * the class is one byte-load away, in the class table just below base.
 *
 * Each thread that owns a counter shard keeps a free list per class (the cache),
 * filled and emptied in batches under that class's lock: a flushed batch waits whole
 * for the next refill (up to eight a class), else its slots go back to their
 * spans. Free lists are safe-linked: each link is stored XORed with its own address
 * shifted right by 12 and a per-process key, and a link that does not decode to an
 * address in the heap ends the program; a trailer carries a per-process check value,
 * so a double free, a free of an address never handed out and an overrun into the
 * trailer are caught at free (Documentation/security.md, "Heap misuse").
 *
 * fork() does not take the heap's locks: glibc takes its stdio and NSS locks after
 * the atfork handlers, and code holding them may allocate, so holding ours across
 * fork could deadlock. A child that finds a lock held (its holder is not in the
 * child) sets aside what it guards: that class's spans, or the pool's empty spans,
 * are never handed out again in the child (memory, not correctness).
 * A thread without a shard (no exit hook to empty a cache) does not cache: it
 * allocates from glibc with a record, and frees straight to the slot's span.
 * Like glibc's tcache, a cache is not async-signal-safe: a signal handler that
 * allocates while its thread is inside malloc or free may break it (POSIX allows
 * neither call in a handler).
 */
#ifndef ALLOCINFO_SMALL_HEAP_H
#define ALLOCINFO_SMALL_HEAP_H

#include "internal.h"

namespace allocinfo {
namespace small {

constexpr unsigned CLASSES = 64;
constexpr size_t MAX = 1032;		/* the largest request served: glibc's tcache's */
constexpr unsigned SPAN_SHIFT = 14;	/* 16 KiB spans */
constexpr size_t SPAN = (size_t)1 << SPAN_SHIFT;
constexpr size_t MAX_SPANS = (size_t)1 << 18;	/* 4 GiB of heap at most */
constexpr size_t GROW = (size_t)4 << 20;	/* the mapping grows 4 MiB at a time */
constexpr unsigned PURGE_DELAY_MS = 500;	/* empty this long: back to the system
						 * (lengthened while purges are regretted) */
constexpr uint8_t NO_CLASS = 0xff;	/* a span no class owns (in the pool) */
/* No user pointer is at or above 2^63: free() then finds nothing in a heap never
 * reserved (its length is 0 as well). */
constexpr uintptr_t NO_BASE = (uintptr_t)1 << 63;

constexpr unsigned class_of(size_t n)
{
	return n <= 24 ? 0 : (unsigned)((n - 9) >> 4);
}

/* Bytes the caller may use, and the distance between slots. */
constexpr size_t usable(unsigned c)
{
	return 24 + ((size_t)c << 4);
}

constexpr size_t stride(unsigned c)
{
	return usable(c) + 8;
}

/* Slots in a span of class c: the few bytes past the last are never used. */
constexpr unsigned slots_per_span(unsigned c)
{
	return (unsigned)(SPAN / stride(c));
}

/* The last 8 bytes of a slot. check is the process's canary while the block is live
 * (neither of its bytes is ever 0, so a string's terminator written one past the end
 * is always seen); check and size are 0 once freed (FREED_WORD: one store). */
struct trailer {
	uint16_t check;
	uint16_t size;		/* bytes the caller asked for */
	uint32_t counter;	/* slot * 16, as in a record */
};
static_assert(sizeof(trailer) == 8, "a trailer is the slot's last 8 bytes");
constexpr uint32_t FREED_WORD = 0;	/* the first 4 bytes of a free slot's trailer */

/* A thread's free lists: a slot's first word links to the next free one, encoded. */
struct thread_cache {
	void *head[CLASSES];
	uint16_t count[CLASSES];
	uint32_t batches;	/* refills and flushes: every 64th looks for spans to purge */
	uint32_t reclaim_from;	/* batches before the idle classes are drained again */
};
extern __thread thread_cache t_cache __attribute__((tls_model("initial-exec"))) HIDDEN;

/* How many slots a refill brings and a flush takes back: about 2 KiB of them (a
 * thread's lists hold up to two batches a class, memory no other thread can use). */
extern const uint8_t g_batch[CLASSES] HIDDEN;
/* How many a cache holds at most per class (two batches): one more, and a batch goes
 * back to the spans. */
extern const uint16_t g_cache_max[CLASSES] HIDDEN;

static inline bool contains(const void *p, uintptr_t base)
{
	return (uintptr_t)p - base < g_fast.small_len;
}

/* The class of the span holding p (NO_CLASS for one back in the pool, 0 for one
 * never handed out): the class table ends at base. */
static inline unsigned class_at(const void *p, uintptr_t base)
{
	uintptr_t off = (uintptr_t)p - base;
	return reinterpret_cast<const uint8_t *>(base - MAX_SPANS)[off >> SPAN_SHIFT];
}

static inline trailer *trailer_of(void *p, unsigned c)
{
	return reinterpret_cast<trailer *>(static_cast<char *>(p) + usable(c));
}

/*
 * ceil(2^64 / stride(c)) (one more for a power of two): an offset o within a span is
 * k strides exactly when o * g_stride_inverse[c] (mod 2^64) is k * e, e the small
 * rounding error, and at least g_stride_inverse[c] otherwise (Lemire, Kaser and Kurz,
 * "Faster remainder by direct computation", 2019). g_slot_limit[c] is
 * slots_per_span(c) * e: one compare tells a slot's start from anything else. Both
 * have 256 entries, 0 past the classes, so NO_CLASS matches nothing.
 */
extern const uint64_t g_stride_inverse[256] HIDDEN;
extern const uint64_t g_slot_limit[256] HIDDEN;

/* p is the start of a slot of class c. */
static inline bool slot_start(const void *p, uintptr_t base, unsigned c)
{
	uint64_t offset = ((uintptr_t)p - base) & (SPAN - 1);
	return offset * g_stride_inverse[c] < g_slot_limit[c];
}

/* The trailer's first 4 bytes for a live block of `size` bytes. */
static inline uint32_t live_word(size_t size)
{
	return g_fast.small_canary | (uint32_t)size << 16;
}

/* p, with its trailer t, is a live block of class c: the start of a slot, whose check
 * is the canary and whose size the class holds. */
static inline bool live_slot(const void *p, uintptr_t base, unsigned c, const trailer *t)
{
	uint32_t w;
	__builtin_memcpy(&w, t, sizeof(w));
	w ^= g_fast.small_canary;	/* the size, over 16 bits that must be 0 */
	return (w >> 16 | w << 16) <= usable(c) && slot_start(p, base, c);
}

/* A link as stored in a free slot (glibc's safe-linking, with a per-process key). */
static inline void *encode_link(void *next, const void *at)
{
	return reinterpret_cast<void *>((uintptr_t)next ^ ((uintptr_t)at >> 12) ^
					g_fast.small_key);
}

/* A slot from this thread's cache, or null when it is empty (or its list was
 * written to: the caller then reports it). */
static inline void *pop(unsigned c, uintptr_t base)
{
	void *p = t_cache.head[c];
	if (likely(contains(p, base))) {
		t_cache.head[c] = encode_link(*static_cast<void **>(p), p);
		t_cache.count[c]--;
		return p;
	}
	return nullptr;
}

/* Refills the cache of class c and returns a slot, or null: no heap, a thread that
 * may not cache, or no span to be had. The caller then uses glibc. Ends the program
 * if the cache's list was written to. */
void *refill(unsigned c) HIDDEN;
/* Sends a batch of an overfull cache back to its spans. */
void flush(unsigned c) HIDDEN;

static inline void push(void *p, unsigned c)
{
	*static_cast<void **>(p) = encode_link(t_cache.head[c], p);
	t_cache.head[c] = p;
	if (unlikely(++t_cache.count[c] > g_cache_max[c]))
		flush(c);
}

/* A slot freed by a thread that does not cache. */
void release_to_span(void *p, unsigned c) HIDDEN;

/* Start-up: reserves the address range. False if it cannot be had. */
bool init() HIDDEN;
/* A thread's exit: its cache goes back to the spans. */
void thread_exit() HIDDEN;
/* In a forked child: the locks start unlocked; what a held one guarded is set aside. */
void fork_child() HIDDEN;

/* malloc_trim(): this thread's cache back to the spans, every empty span back to the
 * system. True if memory was given back. */
bool trim() HIDDEN;

/* A block of size bytes (at least g_fast.large_free), not mapped on its own, is about
 * to be freed by the allocator underneath: once enough is, that allocator gives back
 * the free pages below its top (small_heap.cpp). */
void freed_underneath(size_t size) noexcept HIDDEN;

/* What mallinfo2() adds for the heap. */
struct usage {
	size_t mapped;		/* spans holding memory: in a class, or empty not yet purged */
	size_t in_use;		/* slots handed out (a cache's count as in use, as glibc's
				 * tcache's do), less this thread's cache */
	size_t spans_in_classes, spans_empty, spans_purged;
	uint64_t spans_taken;	/* handed to a class, ever (a class's churn, when high) */
	/* the purge delay now, and the spans purged for their age and taken again
	 * soon after, which lengthened it (small_heap.cpp) */
	uint32_t purge_delay_ms;
	uint64_t purge_regrets;
	/* glibc's trims as the heap grew or large blocks were freed: made, requests
	 * merged into one still due (held back while the trims' budget was spent), and
	 * the time the trims took */
	uint64_t trims_done, trims_spaced_out, trims_ns;
};
usage usage_now() HIDDEN;

/* Ends the program: "allocinfo: what(p): <problem>; aborting", for a block whose
 * trailer or position is wrong. */
[[noreturn]] void report_bad_slot(void *p, const char *what) HIDDEN;

} /* namespace small */
} /* namespace allocinfo */

#endif
