/* SPDX-License-Identifier: MIT */
/*
 * The allocation fast path: choose the tag, allocate (a slot of the small-block heap,
 * or glibc's block with a record in front), count.
 * Inlined into every exported entry point (override.cpp), so an allocation that
 * reaches the library is one call from the program into it, and for a block beyond
 * the small-block heap one from it into glibc. allocinfo.h's inline path takes the
 * glibc steps in the caller, for a tagged malloc, calloc, strdup or strndup too large
 * for the heap; the layouts they share are its version 1 (static_asserts in
 * internal.h and thread_shard.h).
 *
 * Everything that is not "running, counting, not debugging" (start-up, ALLOCINFO=0 or
 * never, ALLOCINFO_DEBUG, aligned blocks, blocks without a record) leaves the fast
 * path through one branch into out-of-line code (slow_mode(), release_other()); so
 * do the small-block heap's empty or overfull caches and bad pointers (small::refill(),
 * small::flush(), release_small_other()).
 */
#ifndef ALLOCINFO_ALLOC_H
#define ALLOCINFO_ALLOC_H

#include <errno.h>
#include <string.h>

#include "backend.h"
#include "caller_tags.h"
#include "internal.h"
#include "page_starts.h"
#include "registry.h"
#include "route.h"
#include "small_heap.h"
#include "thread_shard.h"

#ifndef ALLOCINFO_BACKEND_NEXT
/* Calls into glibc go through the GOT directly, without the PLT's extra jump. */
extern "C" {
void *__libc_malloc(size_t) noexcept __attribute__((noplt));
void *__libc_calloc(size_t, size_t) noexcept __attribute__((noplt));
void *__libc_realloc(void *, size_t) noexcept __attribute__((noplt));
void __libc_free(void *) noexcept __attribute__((noplt));
void *__libc_memalign(size_t, size_t) noexcept __attribute__((noplt));
}
#endif

namespace allocinfo {

/* The fast path may be taken (see fast_state::go). */
static inline bool fast_go()
{
	const uint32_t *go = __atomic_load_n(&g_fast.go, __ATOMIC_ACQUIRE);
#if defined(__x86_64__)
	/* The word compared in memory: one instruction fewer than load and test. */
	asm goto("cmpl $0, %0\n\tje %l[stop]" : : "m"(*go) : "cc" : stop);
	return true;
stop:
	return false;
#else
	return likely(__atomic_load_n(go, __ATOMIC_RELAXED) != 0);
#endif
}

/* How an allocation that missed the fast path is made. */
enum class how {
	never,		/* the process never counts: the backend alone, no record anywhere */
	off,		/* counting is off: no record (a block may still have one) */
	discard,	/* a record charged to nothing (start-up, off under debug or a
			 * sanitizer, which need every block to carry a record) */
	counted,	/* counting, with a record (marked RECORD_F_DEBUG under debug) */
};
struct slow_plan {
	how mode;
	uint32_t flags;		/* RECORD_F_* for the record */
};
/* Settles the process state (start-up happens in the first call) and says how to
 * allocate now. */
slow_plan slow_mode() HIDDEN;

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
	const alloc_tag *o = allocinfo__thread.override;
	return slot_of(o ? o : site);
}

/* A call with no tag of its own: scope, then alloc_hooks(), then the caller. Usually
 * neither is set: both words are tested at once, and the caller's tag falls through. */
static inline uint32_t slot_for_caller(uintptr_t ra)
{
	const alloc_tag *o = allocinfo__thread.override, *c = allocinfo__thread.current;
	if (likely(!((uintptr_t)o | (uintptr_t)c)))
		return caller_slot(ra);
	return slot_of(o ? o : c);
}

/* Counts a block and writes its record, for a thread without a shard of its own;
 * returns the caller's pointer. */
void *finish_unowned(alloc_record *rec, uint32_t slot, size_t size, uint32_t meta) HIDDEN;

/*
 * Counts and writes the record; returns the caller's pointer. A record without flags
 * is counted even in the discard slot (a real counter no reader shows: cheaper than a
 * branch); one marked RECORD_F_UNCOUNTED is not, as the counters may not exist yet.
 * The counter comes first: its load then never waits behind the record's stores
 * (which can share its address modulo 4 KiB). A thread without a shard leaves by a
 * tail call, so the fast path keeps nothing live across it.
 */
static inline void *finish(alloc_record *rec, uint32_t slot, size_t size, uint32_t meta)
{
	if (likely(!(meta & RECORD_F_UNCOUNTED))) {
		char *shard = thread_shard();
		if (unlikely(!shard))
			return finish_unowned(rec, slot, size, meta);
		allocinfo_counter *c = counter_at(shard, slot);
		add_owned(&c->bytes, (int64_t)size);
		add_owned(&c->calls, 1);
	}
	rec->size = size;
	rec->counter = counter_offset(slot);
	rec->meta = meta;
	return page_starts::note(rec + 1);
}

/* Counts a slot of the small-block heap and writes its trailer. */
static inline void *finish_small(void *p, unsigned c, uint32_t slot, size_t size, bool zero)
{
	char *shard = thread_shard();
	if (likely(shard)) {
		allocinfo_counter *ctr = counter_at(shard, slot);
		add_owned(&ctr->bytes, (int64_t)size);
		add_owned(&ctr->calls, 1);
	} else {
		counter_add_unowned(slot, (int64_t)size, 1);
	}
	/* check, size and counter in one store */
	uint64_t w = small::live_word(size) | (uint64_t)counter_offset(slot) << 32;
	__builtin_memcpy(small::trailer_of(p, c), &w, sizeof(w));
	if (zero)
		memset(p, 0, size);
	return p;
}

/* The two sizes a record block cannot simply add its 16 bytes to, taken by one test
 * on the way (size - 1 past SIZE_MAX - 17):
 *   - 0: the block gets one byte. In a 16-byte size class a block of the record alone
 *     would end where the next block starts, and malloc(0) would return that block's
 *     address (whose free() would then find this record below it);
 *   - one that the record would take past SIZE_MAX: the allocator underneath (glibc's,
 *     or another, foreign) is asked for it as it is, and fails it in its own way (its
 *     errno; tcmalloc's new handler, in its new mode).
 */
static inline bool edge_size(size_t size)
{
	return size - 1 >= SIZE_MAX - sizeof(alloc_record);
}
[[gnu::cold]] void *allocate_edge(uint32_t slot, size_t size, bool zero, uint32_t flags,
				  bool foreign) HIDDEN;

/* malloc/calloc with glibc's own 16-byte alignment: a small counted block from the
 * small-block heap when it has one, else glibc's with a record in front. */
static inline __attribute__((always_inline)) void *allocate(uint32_t slot, size_t size,
								bool zero, uint32_t flags = 0)
{
	/* Without a heap (ALLOCINFO_HEAP=glibc, another allocator underneath) small_end
	 * is 0, and the cache is not looked at. */
	if (likely(size < g_fast.small_end) && flags == 0) {
		unsigned c = small::class_of(size);
		void *p = small::pop(c, g_fast.small_base);
		if (likely(p) || (p = small::refill(c)))
			return finish_small(p, c, slot, size, zero);
	}
	if (unlikely(edge_size(size)))
		return allocate_edge(slot, size, zero, flags, false);
	size_t total = size + sizeof(alloc_record);
	auto *rec = static_cast<alloc_record *>(zero ? backend::calloc(1, total)
						      : backend::malloc(total));
	if (unlikely(!rec))
		return nullptr;
	return finish(rec, slot, size, RECORD_MAGIC | flags);
}

/* A block of another allocator, with a record in front (backend.h): inline for the
 * lean path over it (foreign_path.cpp), out of line for the others. */
static inline __attribute__((always_inline)) void *allocate_foreign_inline(uint32_t slot,
									   size_t size,
									   bool zero,
									   uint32_t flags)
{
	if (unlikely(edge_size(size)))
		return allocate_edge(slot, size, zero, flags, true);
	size_t total = size + sizeof(alloc_record);
	auto *rec = static_cast<alloc_record *>(zero ? backend::foreign.calloc(1, total)
						      : backend::foreign.malloc(total));
	if (unlikely(!rec))
		return nullptr;
	return finish(rec, slot, size, RECORD_MAGIC | flags);
}
void *allocate_foreign(uint32_t slot, size_t size, bool zero, uint32_t flags) HIDDEN;
/* operator new (array false) or new[] of size bytes over a sanitizer, by its own
 * (backend::g_new_kinds): the block's record says so (RECORD_F_CXX). Null when it has
 * no memory, for the caller's new handler. */
void *allocate_foreign_new(uint32_t slot, size_t size, bool array, uint32_t flags) HIDDEN;

/* allocate() for the out-of-line paths, whose plan may say that another allocator is
 * underneath (RECORD_F_FOREIGN); the fast path calls allocate() itself, untouched. */
static inline void *allocate_flagged(uint32_t slot, size_t size, bool zero, uint32_t flags)
{
	if (unlikely(flags & RECORD_F_FOREIGN))
		return allocate_foreign(slot, size, zero, flags);
	return allocate(slot, size, zero, flags);
}

/* An allocation under a plan other than how::counted. */
void *allocate_planned(slow_plan plan, size_t n, bool zero) HIDDEN;

/* Larger alignments: up to 32, the record sits just below the aligned pointer, inside
 * the padding, and the shift says how far below the pointer the block begins; from 64
 * on, it is in the block's last 16 bytes (alloc.cpp), which costs no padding.
 * reserve: bytes the block must hold when more than size (pvalloc's whole pages);
 * the record and the counters still say size. */
void *allocate_aligned(uint32_t slot, size_t align, size_t size, size_t reserve = 0,
		       uint32_t flags = 0) HIDDEN;

/* Validates a pointer handed to free/realloc under ALLOCINFO_DEBUG; false (after a
 * message) when it is not one of ours. below_readable_known: the caller has already
 * read the record's magic (below_readable() need not be asked again). */
bool check_pointer(void *p, const char *what, bool below_readable_known = false) HIDDEN;

/* free() of another allocator's counted block (record RECORD_MAGIC | RECORD_F_FOREIGN)
 * by a thread with a shard: uncounted, objects loaded since routing routed, then
 * freed by the allocator (last: a tail call). */
void route_then_free_foreign(alloc_record *rec) noexcept HIDDEN;
static inline void release_foreign(alloc_record *rec, char *shard)
{
	sub_owned_at(shard, rec->counter & g_fast.counter_mask, (int64_t)rec->size);
	rec->meta = 0;	/* no stale record below the block after it, once reused */
	if (route_pending())	/* objects loaded since: their calls too */
		route_then_free_foreign(rec);	/* out of line: no frame here */
	else
		backend::foreign.free(rec);
}

/* p's record when p is a counted block of the allocator underneath, plain: record
 * RECORD_MAGIC | RECORD_F_FOREIGN (no alignment, no flag), or with Unflagged also
 * RECORD_MAGIC alone (the fast path's, over an allocator after the library). Else
 * null. A slot of the small-block heap (ALLOCINFO_HEAP=own) has no record below it;
 * without the heap (Heap false: the variable was not set when the calls were routed)
 * there is none to test for. Below a page's start nothing is read (page_starts.h). */
template <bool Heap = true, bool Unflagged = false>
static inline alloc_record *plain_foreign_record(void *p)
{
	if (Heap && small::contains(p, g_fast.small_base))
		return nullptr;
	alloc_record *rec = record_of(p);
	if (unlikely(page_starts::starts_page(p) ||
		     (rec->meta | (Unflagged ? RECORD_F_FOREIGN : 0)) !=
			     (RECORD_MAGIC | RECORD_F_FOREIGN)))
		return nullptr;
	return rec;
}

/* What a routed free() does first (override.cpp, allocator_api.cpp): null, or the
 * allocator's plain counted block freed by a thread with a shard; true when done. */
template <bool Heap> static inline bool routed_release(void *p)
{
	if (unlikely(!p))
		return true;
	alloc_record *rec = plain_foreign_record<Heap>(p);
	char *shard = thread_shard();
	if (unlikely(!rec || !shard))
		return false;
	release_foreign(rec, shard);
	return true;
}

/* free() of a block whose record is not exactly the plain one, or that has none
 * (made while counting was off); and the same for operator delete, for callbacks.
 * exported: reached from the exported free() (backend::g_passing_on). */
void release_other(void *p, bool exported = false) noexcept HIDDEN;
void release_other_delete(void *p) noexcept HIDDEN;
void release_other_delete_array(void *p) noexcept HIDDEN;
/* free() of a block whose record is not plain: aligned, uncounted, debug, made while
 * user callbacks were registered (callbacks.h), made by a sanitizer's operator new; op
 * is the program's call (OP_DELETE_ARRAY for delete[]). */
void release_slow(void *p, int op = ALLOCINFO_OP_FREE) noexcept HIDDEN;
/* free() of p, with a plain record, by a thread without a shard of its own. */
void release_unowned(void *p) noexcept HIDDEN;
/* The end of free() of a block of g_fast.large_free bytes or more, counted: noted
 * for the small-block heap's trims (small_heap.h), then freed underneath. */
void release_large(alloc_record *rec, size_t size) noexcept HIDDEN;

/* free() of a slot of the small-block heap that is not the common case: a wrong
 * pointer, or a thread that does not cache. */
void release_small_other(void *p) noexcept HIDDEN;

static inline void release_small(void *p, uintptr_t small_base)
{
	unsigned c = small::class_at(p, small_base);
	small::trailer *t = small::trailer_of(p, c);
	char *shard = thread_shard();
	if (unlikely(!small::live_slot(p, small_base, c, t) || !shard)) {
		release_small_other(p);
		return;
	}
	sub_owned_at(shard, t->counter & g_fast.counter_mask, t->size);
	uint32_t freed = small::FREED_WORD;	/* a second free fails the check */
	__builtin_memcpy(t, &freed, sizeof(freed));
	small::push(p, c);
}

/* Every branch away from the common case ends in a tail call, so that free() needs no
 * stack frame. */
template <bool Exported = false>
static inline void release(void *p, int op = ALLOCINFO_OP_FREE)
{
	uintptr_t small_base = g_fast.small_base;
	if (small::contains(p, small_base)) {
		release_small(p, small_base);
		return;
	}
	alloc_record *rec = record_of(p);
	/* Below a page's start nothing is read before release_other() knows it may be. */
	if (unlikely(page_starts::starts_page(p) || rec->meta != RECORD_MAGIC)) {
		if (op == ALLOCINFO_OP_FREE)
			release_other(p, Exported);
		else if (op == OP_DELETE_ARRAY)
			release_other_delete_array(p);
		else
			release_other_delete(p);
		return;
	}
	char *shard = thread_shard();
	if (unlikely(!shard)) {
		release_unowned(p);
		return;
	}
	size_t size = rec->size;
	sub_owned_at(shard, rec->counter & g_fast.counter_mask, (int64_t)size);
	rec->meta = 0;	/* no stale record once glibc merges the chunk (pointer_info.cpp) */
	if (unlikely(size >= g_fast.large_free)) {
		release_large(rec, size);
		return;
	}
	backend::free(rec);
}

/* realloc of p (not null) to n bytes (not 0), charged to slot with record flags. */
void *reallocate(uint32_t slot, void *p, size_t size, uint32_t flags = 0) HIDDEN;
/* realloc while nothing new gets a record. */
void *reallocate_off(void *p, size_t size) HIDDEN;
size_t usable_size(void *p) HIDDEN;

/* Whether p (any pointer, null included), a block of the allocator underneath when it
 * is not glibc, is one the library made and must free: a slot of its heap, or a block
 * with its record in front (over another allocator none has a tail record:
 * allocate_aligned()). False for every block with ALLOCINFO=never. The common answers
 * inline, so that a caller that passes its arguments on keeps them in registers. */
bool block_is_ours_slow(void *p) HIDDEN;
static inline bool block_is_ours(void *p)
{
	if (unlikely(!p))
		return false;
	if (small::contains(p, g_fast.small_base))
		return true;
	if (unlikely(page_starts::guarded_start(p)))
		return !page_starts::known_absent(p) && block_is_ours_slow(p);
	return (record_of(p)->meta & RECORD_MAGIC_MASK) == RECORD_MAGIC && !backend::g_no_records;
}

/* What free() (op ALLOCINFO_OP_FREE) or operator delete (ALLOCINFO_OP_DELETE,
 * OP_DELETE_ARRAY) and
 * malloc_usable_size() do with p: the exported functions' bodies (override.cpp). */
void free_block(void *p, int op) noexcept HIDDEN;
size_t block_usable_size(void *p) HIDDEN;

/* What the allocator's own allocating functions do (allocator_api.cpp), counted for
 * the caller at ra as malloc's blocks are: a block of n bytes (aligned to align unless
 * 0, zeroed if asked); realloc(); operator new (throws, or calls the new handler, as
 * it does); a copy of at most n bytes of the string s, with a terminating zero. */
void *caller_allocate(size_t n, size_t align, bool zero, uintptr_t ra) HIDDEN;
void *caller_resize(void *p, size_t n, uintptr_t ra) HIDDEN;
void *caller_new(size_t n, uintptr_t ra) HIDDEN;
char *caller_strndup(const char *s, size_t n, uintptr_t ra) HIDDEN;

} /* namespace allocinfo */

#endif
