/* SPDX-License-Identifier: MIT */
/*
 * The allocator underneath has functions of its own: jemalloc's mallocx, dallocx,
 * sdallocx, sallocx, rallocx and xallocx; tcmalloc's tc_malloc, tc_free, tc_realloc,
 * tc_new, tc_malloc_size and their kin; mimalloc's mi_malloc, mi_free, mi_realloc,
 * mi_usable_size and theirs. A program may hand those that take a block one that
 * malloc or new made, and over that allocator such a block carries the library's
 * record: the allocator would get a pointer 16 bytes into its own block. Its size
 * would read 16 bytes too large (the program could write past the end into the next
 * block's record), a sized free would name the wrong size class, and the block would
 * stay counted after its free. And the blocks those that allocate make would go
 * uncounted.
 *
 * So the program's calls to these functions (every loaded object's, the allocator's
 * own calls to itself excepted) are routed (route.h) to one entry point each:
 *
 *   - an allocation (mallocx, tc_new, mi_zalloc_aligned, mi_strdup, ...): counted for
 *     its caller, as malloc's are, with the alignment and zeroing it asks for; the
 *     forms that are malloc's or new's under another name reach the library's own
 *     entry point of that name. Arguments that only the allocator can honour
 *     (jemalloc's arenas and thread caches, mimalloc's heaps and offsets) get the
 *     allocator's block, uncounted, as before;
 *   - a free (dallocx, mi_free_size, tc_delete_aligned, ...): a block of ours is
 *     freed as free() frees it, uncounted;
 *   - a size (sallocx, mi_usable_size, tc_malloc_size, ...): malloc_usable_size();
 *   - a resize that realloc() could make (rallocx without flags, mi_realloc,
 *     tc_realloc, reallocarr, ...): realloc()'s, counted for the caller, whoever made
 *     the old block;
 *   - any other resize (zeroing, aligned, in a heap): a block of ours is copied to a
 *     block of the allocator's own, which the function then resizes with its own
 *     arguments; the result is the allocator's, uncounted, and ours is freed; if the
 *     resize fails, ours is left as it was;
 *   - a resize in place (xallocx, mi_expand): not done; the answer says so.
 *
 * Everything else goes to the allocator untouched.
 */
#ifndef ALLOCINFO_ALLOCATOR_API_H
#define ALLOCINFO_ALLOCATOR_API_H

#include <link.h>

#include "internal.h"

namespace allocinfo {

/* The most functions routed (every one that jemalloc, tcmalloc or mimalloc defines). */
constexpr unsigned ALLOCATOR_API_MAX = 112;

/* The functions of the table that `allocator` defines and that the process's calls
 * reach there (no object before it in lookup order defines them too): their names
 * and the entry points that calls of them should lead to, at most `max` (`self` is
 * liballocinfo, whose exported functions some of them are). The allocator's own
 * symbols for those that take a block lead to the entry points from then on
 * (route.h's redirect_symbol()), so this is asked once, at start-up. */
unsigned allocator_api_entries(struct link_map *allocator, struct link_map *self,
			       const char **names, void **fns, unsigned max) HIDDEN;

} /* namespace allocinfo */

#endif
