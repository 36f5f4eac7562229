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

inline __attribute__((always_inline)) void *allocate_lean(uint32_t slot, size_t n, bool zero)
{
	if (unlikely(n < g_fast.small_end))
		return allocate_small(slot, n, zero);
	return allocate_foreign_inline(slot, n, zero, RECORD_F_FOREIGN);
}

} /* namespace */

template <bool Zero> void *foreign_malloc(size_t n, uintptr_t ra)
{
	if (route_pending())	/* objects loaded since: their calls first */
		route_new_objects();
	return allocate_lean(slot_for_caller(ra), n, Zero);
}

template <bool Zero> void *foreign_site_malloc(const alloc_tag *t, size_t n)
{
	if (route_pending())
		route_new_objects();
	return allocate_lean(slot_for_site(t), n, Zero);
}

void *foreign_new(size_t n, uintptr_t ra)
{
	void *p = foreign_malloc<false>(n, ra);
	return likely(p != nullptr) ? p : new_failed(n, 0, ra, false);
}

template void *foreign_malloc<false>(size_t, uintptr_t);
template void *foreign_malloc<true>(size_t, uintptr_t);
template void *foreign_site_malloc<false>(const alloc_tag *, size_t);
template void *foreign_site_malloc<true>(const alloc_tag *, size_t);

} /* namespace allocinfo */
