/* SPDX-License-Identifier: MIT */
/*
 * The library's own heap for small counted blocks: the userspace counterpart of the
 * kernel's slab, where the tag reference lives with the object instead of in front
 * of it.
 *
 * A counted request of at most MAX (1032) bytes takes a slot of one of 64 size
 * classes. Class c owns 256 MiB of one reserved 16 GiB range, cut into slots of
 * 32 + 16c bytes: the caller may use all but the last 8 bytes, which hold the slot's
 * trailer (the requested size and the tag's counter offset). That is exactly
 * glibc's footprint for the same request (its chunk header is 8 bytes, and chunks
 * are rounded to 16), so a counted small block costs no memory beyond a plain one,
 * where the 16-byte record in front of a glibc block costs 16 bytes.
 *
 * free() knows these blocks by address alone (one subtract and compare), so no
 * magic number is needed to tell them from glibc's, and the class follows from
 * the address, so the trailer is found without reading any header.
 *
 * Each thread that owns a counter shard keeps a free list per class (the cache),
 * moved to and from a per-class central list in batches under that class's lock.
 * fork() does not take those locks: glibc takes its stdio and NSS locks after the
 * atfork handlers, and code holding them may allocate, so holding ours across fork
 * could deadlock. Every change a lock guards is published by one store, so the child
 * sees each central list before or after a change, never halfway; it then
 * reinitialises the locks. (A batch being moved at that instant is lost to the
 * child, which is memory, not correctness.)
 * A thread without a shard (no exit hook to empty a cache) does not cache: it
 * allocates from glibc with a record, and frees straight to the central list. Memory
 * of freed slots is reused for the same class; it is not given back to the system.
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
constexpr unsigned CLASS_SHIFT = 28;	/* 256 MiB of address space per class */
constexpr size_t REGION = (size_t)CLASSES << CLASS_SHIFT;
constexpr uintptr_t CLASS_MASK = ((uintptr_t)1 << CLASS_SHIFT) - 1;
/* No user pointer is at or above 2^63: free() then finds nothing in a heap never
 * reserved. */
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

/* The last 8 bytes of a slot. A free slot has size FREED (above any class's usable
 * size, so free() checks double frees and corruption with one compare). */
struct trailer {
	uint32_t size;		/* bytes the caller asked for */
	uint32_t counter;	/* slot * 16, as in a record */
};
constexpr uint32_t FREED = UINT32_MAX;

/* A thread's free lists: a slot's first word links to the next free one. */
struct thread_cache {
	void *head[CLASSES];
	uint16_t count[CLASSES];
};
extern __thread thread_cache t_cache __attribute__((tls_model("initial-exec"))) HIDDEN;

/* How many slots a refill brings and a flush takes back: about 4 KiB of them. */
extern const uint8_t g_batch[CLASSES] HIDDEN;
/* How many a cache holds at most per class (two batches): one more, and a batch goes
 * back to the central list. */
extern const uint16_t g_cache_max[CLASSES] HIDDEN;

static inline bool contains(const void *p, uintptr_t base)
{
	return (uintptr_t)p - base < REGION;
}

static inline unsigned class_at(const void *p, uintptr_t base)
{
	return (unsigned)(((uintptr_t)p - base) >> CLASS_SHIFT);
}

static inline trailer *trailer_of(void *p, unsigned c)
{
	return reinterpret_cast<trailer *>(static_cast<char *>(p) + usable(c));
}

/* ceil(2^64 / stride(c)): an offset o < 2^32 is a multiple of the stride exactly
 * when o * g_stride_inverse[c] (mod 2^64) is below it (Lemire, Kaser and Kurz, "Faster
 * remainder by direct computation", 2019). */
extern const uint64_t g_stride_inverse[CLASSES] HIDDEN;

/* p is the start of a slot of class c. */
static inline bool slot_start(const void *p, uintptr_t base, unsigned c)
{
	uint64_t offset = ((uintptr_t)p - base) & CLASS_MASK;
	return offset * g_stride_inverse[c] < g_stride_inverse[c];
}

/* p, with its trailer t, may be a live block of class c: the start of a slot, with a
 * size the class holds (a freed slot's FREED is not). A slot past those ever handed
 * out passes too: its trailer is still zero. */
static inline bool live_slot(const void *p, uintptr_t base, unsigned c, const trailer *t)
{
	return t->size <= usable(c) && slot_start(p, base, c);
}

/* A slot from this thread's cache, or null when it is empty. */
static inline void *pop(unsigned c)
{
	void *p = t_cache.head[c];
	if (likely(p)) {
		t_cache.head[c] = *static_cast<void **>(p);
		t_cache.count[c]--;
	}
	return p;
}

/* Refills the cache of class c and returns a slot, or null: no heap, a thread that
 * may not cache, or class c's address space used up. The caller then uses glibc. */
void *refill(unsigned c) HIDDEN;
/* Sends half of an overfull cache back to the central list. */
void flush(unsigned c) HIDDEN;

static inline void push(void *p, unsigned c)
{
	*static_cast<void **>(p) = t_cache.head[c];
	t_cache.head[c] = p;
	if (unlikely(++t_cache.count[c] > g_cache_max[c]))
		flush(c);
}

/* A slot freed by a thread that does not cache. */
void release_to_central(void *p, unsigned c) HIDDEN;

/* Start-up: reserves the address range. False if it cannot be had. */
bool init() HIDDEN;
/* A thread's exit: its cache goes back to the central lists. */
void thread_exit() HIDDEN;
/* In a forked child: the central lists' locks start unlocked. */
void fork_child() HIDDEN;

/* "free(p): <problem>; leaving it alone", for a slot whose trailer is wrong. */
void report_bad_slot(void *p, const char *what) HIDDEN;

} /* namespace small */
} /* namespace allocinfo */

#endif
