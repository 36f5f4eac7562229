/* SPDX-License-Identifier: MIT */
/*
 * The lean allocation path over another allocator that comes first in symbol lookup
 * order (backend.h's underneath::first). There the fast path stays off: every
 * allocation must first check whether objects were loaded since the process's calls
 * were routed (route.h), and the blocks are that allocator's, not glibc's. Instead of
 * the whole slow path (callbacks, slow_mode(), the plan's flags), the entry points'
 * "off" halves take this one when it is open: check the routing, pick the slot, ask
 * the allocator for the block and its record, count. With ALLOCINFO_HEAP=own, small
 * counted blocks come from the library's own heap instead, as on the fast path.
 *
 * g_foreign_go points to the store's enabled word while the path may be taken
 * (running, no debugging, no user callbacks: update_fast_paths()), else to a zero
 * word; counting switched off at run time therefore closes it too.
 */
#ifndef ALLOCINFO_FOREIGN_PATH_H
#define ALLOCINFO_FOREIGN_PATH_H

#include "internal.h"

struct alloc_tag;

namespace allocinfo {

extern const uint32_t *g_foreign_go HIDDEN;

static inline bool foreign_go()
{
	const uint32_t *go = __atomic_load_n(&g_foreign_go, __ATOMIC_ACQUIRE);
	return __atomic_load_n(go, __ATOMIC_RELAXED) != 0;
}

/* malloc (Zero false) or calloc of n bytes for the caller at ra, or for call site t.
 * Zero is a template parameter so that the path keeps one register fewer across the
 * allocator's call. Heap false: the caller knows that there is no small-block heap
 * (routed_entry()), and its tests are left out. */
template <bool Zero, bool Heap = true> void *foreign_malloc(size_t n, uintptr_t ra) HIDDEN;
template <bool Zero, bool Heap = true>
void *foreign_site_malloc(const alloc_tag *t, size_t n) HIDDEN;
/* realloc of p to n bytes for the caller at ra, or for call site t, as glibc's: p null
 * allocates, n 0 frees. The allocator's own counted block is resized by its realloc
 * here; any other (aligned, without a record, a heap slot) goes to reallocate(). */
template <bool Heap = true> void *foreign_realloc(void *p, size_t n, uintptr_t ra) HIDDEN;
template <bool Heap = true>
void *foreign_site_realloc(const alloc_tag *t, void *p, size_t n) HIDDEN;
/* operator new of n bytes for the caller at ra: foreign_malloc<false>, and then
 * new_failed() when the allocator has none, so that its caller needs no frame. */
template <bool Heap = true> void *foreign_new(size_t n, uintptr_t ra) HIDDEN;

/* operator new's answer to a failed allocation (override.cpp): the new handler's
 * loop, then std::bad_alloc (or null for nothrow). */
[[gnu::noinline]] void *new_failed(size_t n, size_t align, uintptr_t ra, bool nothrow) HIDDEN;

} /* namespace allocinfo */

#endif
