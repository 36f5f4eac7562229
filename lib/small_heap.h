/* SPDX-License-Identifier: MIT */
/*
 * The library's own heap for small counted blocks: the userspace counterpart of the
 * kernel's slab, where the tag reference lives with the object instead of in front
 * of it.
 *
 * A counted request of at most SMALL_MAX bytes takes a slot of one of 64 size
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
 * A thread without a shard (no exit hook to empty a cache) does not cache: it
 * allocates from glibc with a record, and frees straight to the central list. Memory
 * of freed slots is reused for the same class; it is not given back to the system.
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

/* How many slots a cache holds at most per class, before half go back to the
 * central list; and how many a refill brings. About 4 KiB of slots at a time. */
extern const uint8_t g_batch[CLASSES] HIDDEN;

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

/* p, with its trailer t, may be a live block of class c: aligned, and a size the
 * class holds (a freed slot's FREED is not). */
static inline bool live_slot(const void *p, unsigned c, const trailer *t)
{
	return t->size <= usable(c) && !((uintptr_t)p & 15);
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
	if (unlikely(++t_cache.count[c] > 2 * g_batch[c]))
		flush(c);
}

/* A slot freed by a thread that does not cache. */
void release_to_central(void *p, unsigned c) HIDDEN;

/* Start-up: reserves the address range. False if it cannot be had. */
bool init() HIDDEN;
/* A thread's exit: its cache goes back to the central lists. */
void thread_exit() HIDDEN;
/* fork: the central lists' locks are held across it. */
void fork_prepare() HIDDEN;
void fork_done() HIDDEN;

/* "free(p): <problem>; leaving it alone", for a slot whose trailer is wrong. */
void report_bad_slot(void *p, const char *what) HIDDEN;

} /* namespace small */
} /* namespace allocinfo */

#endif
