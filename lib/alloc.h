/* SPDX-License-Identifier: MIT */
/*
 * The allocation fast path: choose the tag, allocate with a record in front, count.
 * Inlined into every exported entry point (override.cpp), so a tagged malloc is one
 * call from the program into the library and one from the library into glibc.
 */
#ifndef ALLOCINFO_ALLOC_H
#define ALLOCINFO_ALLOC_H

#include <errno.h>

#include "backend.h"
#include "caller_tags.h"
#include "internal.h"
#include "percpu.h"
#include "registry.h"

namespace allocinfo {

/* What an entry point does when the process is not (yet) running normally. */
enum class settle { run, plain, discard };
settle settle_state() HIDDEN;

static inline bool running()
{
	return likely(__atomic_load_n(&g_fast.state, __ATOMIC_ACQUIRE) == STATE_RUNNING);
}

static inline bool counting()
{
	return likely(__atomic_load_n(g_fast.enabled, __ATOMIC_RELAXED) != 0);
}

/* The slot of a static tag, registering it on first use. */
static inline uint32_t slot_of(const alloc_tag *t)
{
	uint32_t slot = __atomic_load_n(&t->index, __ATOMIC_RELAXED);
	if (unlikely(slot == ALLOCINFO_TAG_NONE))
		slot = register_tag(t);
	return slot;
}

/* A call site that carries its own tag: a scope (or the guard) overrides it. */
static inline uint32_t slot_for_site(const alloc_tag *site)
{
	if (unlikely(!counting()))
		return ALLOCINFO_TAG_DISCARD;
	const alloc_tag *o = allocinfo__thread.override;
	return slot_of(o ? o : site);
}

/* A call with no tag of its own: scope, then alloc_hooks(), then the caller. */
static inline uint32_t slot_for_caller(uintptr_t ra)
{
	if (unlikely(!counting()))
		return ALLOCINFO_TAG_DISCARD;
	const alloc_tag *t = allocinfo__thread.override;
	if (!t)
		t = allocinfo__thread.current;
	return t ? slot_of(t) : caller_slot(ra);
}

static inline void count(uint32_t slot, int64_t bytes, int64_t calls)
{
	if (likely(slot != ALLOCINFO_TAG_DISCARD))
		counter_add(slot, bytes, calls);
}

/* For a slot read back from a record: masked to the store's capacity, so that even a
 * corrupt record cannot send the counter write outside the counters. */
static inline void count_recorded(uint32_t slot, int64_t bytes, int64_t calls)
{
	if (likely(slot != ALLOCINFO_TAG_DISCARD))
		counter_add(slot & g_fast.slot_mask, bytes, calls);
}

static inline void *finish(void *base, alloc_record *rec, uint32_t slot, size_t size,
			   uint32_t shift)
{
	(void)base;
	rec->size = size;
	rec->tag = slot;
	rec->meta = RECORD_MAGIC | shift << 8;
	count(slot, (int64_t)size, 1);
	return rec + 1;
}

/* malloc/calloc with glibc's own 16-byte alignment. */
static inline void *allocate(uint32_t slot, size_t size, bool zero)
{
	size_t total;
	if (unlikely(__builtin_add_overflow(size, sizeof(alloc_record), &total))) {
		errno = ENOMEM;
		return nullptr;
	}
	void *base = zero ? backend::calloc(1, total) : backend::malloc(total);
	if (unlikely(!base))
		return nullptr;
	return finish(base, static_cast<alloc_record *>(base), slot, size, 0);
}

/* Larger alignments: the record sits just below the aligned pointer, inside the
 * padding, and the shift says how far below the pointer the block begins. */
/* reserve: bytes the block must hold when more than size (pvalloc's whole pages);
 * the caller is still charged size, what it asked for. */
void *allocate_aligned(uint32_t slot, size_t align, size_t size, size_t reserve = 0) HIDDEN;

/* Validates a pointer handed to free/realloc under ALLOCINFO_DEBUG; false (after a
 * message) when it is not one of ours. */
bool check_pointer(void *p, const char *what) HIDDEN;

/* A pointer this library did not hand out. Only sanitizer builds meet them: the
 * sanitizers' strdup, realpath and the like allocate without calling malloc. */
static inline bool foreign(void *p)
{
#ifdef ALLOCINFO_BACKEND_NEXT
	return (record_of(p)->meta & RECORD_MAGIC_MASK) != RECORD_MAGIC;
#else
	(void)p;
	return false;
#endif
}

static inline void release(void *p)
{
	alloc_record *rec = record_of(p);
	uint32_t meta = rec->meta;
	if (unlikely(foreign(p))) {
		backend::free(p);
		return;
	}
	if (unlikely(g_fast.debug) && !check_pointer(p, "free"))
		return;
	count_recorded(rec->tag, -(int64_t)rec->size, -1);
	void *base = rec;
	if (unlikely(meta & RECORD_SHIFT_MASK))
		base = static_cast<char *>(p) - ((size_t)1 << ((meta & RECORD_SHIFT_MASK) >> 8));
	if (unlikely(g_fast.debug))
		rec->meta = 0;	/* a second free of p is then caught */
	backend::free(base);
}

void *reallocate(uint32_t slot, void *p, size_t size) HIDDEN;
size_t usable_size(void *p) HIDDEN;

} /* namespace allocinfo */

#endif
