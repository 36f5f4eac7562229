/* SPDX-License-Identifier: MIT */
/* The lean allocation path over an allocator that comes first (foreign_path.h). */
#include "foreign_path.h"

#include "alloc.h"
#include "route.h"

namespace allocinfo {

const uint32_t *g_foreign_go = &g_stop;

namespace {

/* ALLOCINFO_HEAP=own: a small counted block is the library's, as on the fast path.
 * Out of line, so that the common case keeps few registers. */
[[gnu::noinline]] void *allocate_small(uint32_t slot, size_t n, bool zero)
{
	unsigned c = small::class_of(n);
	void *p = small::pop(c, g_fast.small_base);
	if (p || (p = small::refill(c)))
		return finish_small(p, c, slot, n, zero);
	return allocate_foreign(slot, n, zero, RECORD_F_FOREIGN);
}

template <bool Heap>
inline __attribute__((always_inline)) void *allocate_lean(uint32_t slot, size_t n, bool zero)
{
	if (Heap && unlikely(n < g_fast.small_end))
		return allocate_small(slot, n, zero);
	return allocate_foreign_inline(slot, n, zero, RECORD_F_FOREIGN);
}

/* The slot is asked for only when the call allocates (slot_fn). */
template <bool Heap, typename SlotFn>
inline __attribute__((always_inline)) void *realloc_lean(void *p, size_t n, SlotFn slot_fn)
{
	if (route_pending())
		route_new_objects();
	if (!p)
		return allocate_lean<Heap>(slot_fn(), n, false);
	if (unlikely(n == 0)) {	/* glibc frees and returns NULL */
		release(p);
		return nullptr;
	}
	alloc_record *rec = record_of(p);
	char *shard = thread_shard();
	if (unlikely((Heap && small::contains(p, g_fast.small_base)) ||
		     page_starts::starts_page(p) || !shard ||
		     rec->meta != (RECORD_MAGIC | RECORD_F_FOREIGN) ||
		     n > SIZE_MAX - sizeof(alloc_record)))
		return reallocate(slot_fn(), p, n, RECORD_F_FOREIGN);
	uint32_t slot = slot_fn();
	uint32_t old_counter = rec->counter & g_fast.counter_mask;
	size_t old_size = rec->size;
	rec->meta = 0;	/* if it moves, the old place keeps no record (release()) */
	auto *nrec = static_cast<alloc_record *>(
		backend::foreign.realloc(rec, n + sizeof(alloc_record)));
	if (unlikely(!nrec)) {
		rec->meta = RECORD_MAGIC | RECORD_F_FOREIGN;
		return nullptr;	/* the old block is untouched, and so are its counts */
	}
	sub_owned_at(shard, old_counter, (int64_t)old_size);
	return finish(nrec, slot, n, RECORD_MAGIC | RECORD_F_FOREIGN);
}

} /* namespace */

template <bool Zero, bool Heap> void *foreign_malloc(size_t n, uintptr_t ra)
{
	if (route_pending())	/* objects loaded since: their calls first */
		route_new_objects();
	return allocate_lean<Heap>(slot_for_caller(ra), n, Zero);
}

template <bool Zero, bool Heap> void *foreign_site_malloc(const alloc_tag *t, size_t n)
{
	if (route_pending())
		route_new_objects();
	return allocate_lean<Heap>(slot_for_site(t), n, Zero);
}

template <bool Heap> void *foreign_realloc(void *p, size_t n, uintptr_t ra)
{
	return realloc_lean<Heap>(p, n, [ra] { return slot_for_caller(ra); });
}

template <bool Heap> void *foreign_site_realloc(const alloc_tag *t, void *p, size_t n)
{
	return realloc_lean<Heap>(p, n, [t] { return slot_for_site(t); });
}

template <bool Heap> void *foreign_new(size_t n, uintptr_t ra)
{
	void *p = foreign_malloc<false, Heap>(n, ra);
	return likely(p != nullptr) ? p : new_failed(n, 0, ra, false);
}

template void *foreign_malloc<false, true>(size_t, uintptr_t);
template void *foreign_malloc<true, true>(size_t, uintptr_t);
template void *foreign_malloc<false, false>(size_t, uintptr_t);
template void *foreign_malloc<true, false>(size_t, uintptr_t);
template void *foreign_site_malloc<false, true>(const alloc_tag *, size_t);
template void *foreign_site_malloc<true, true>(const alloc_tag *, size_t);
template void *foreign_site_malloc<false, false>(const alloc_tag *, size_t);
template void *foreign_site_malloc<true, false>(const alloc_tag *, size_t);
template void *foreign_realloc<true>(void *, size_t, uintptr_t);
template void *foreign_realloc<false>(void *, size_t, uintptr_t);
template void *foreign_site_realloc<true>(const alloc_tag *, void *, size_t);
template void *foreign_site_realloc<false>(const alloc_tag *, void *, size_t);
template void *foreign_new<true>(size_t, uintptr_t);
template void *foreign_new<false>(size_t, uintptr_t);

} /* namespace allocinfo */
