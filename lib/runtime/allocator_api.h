/* SPDX-License-Identifier: MIT */
/*
 * The allocator underneath has functions of its own that take a block: jemalloc's
 * dallocx, sdallocx, sallocx, rallocx and xallocx; tcmalloc's tc_free, tc_realloc,
 * tc_malloc_size and tc_delete*; mimalloc's mi_free, mi_realloc, mi_usable_size and
 * their kin. A program may hand them a block that malloc or new made, and over that
 * allocator such a block carries the library's record: the allocator would get a
 * pointer 16 bytes into its own block. Its size would read 16 bytes too large (the
 * program could write past the end into the next block's record), a sized free would
 * name the wrong size class, and the block would stay counted after its free.
 *
 * So the program's calls to these functions (every loaded object's, the allocator's
 * own calls to itself excepted) are routed (route.h) to one entry point each, which
 * hands a block of the library's to the library's own functions and everything else
 * to the allocator untouched:
 *
 *   - a free (dallocx, mi_free_size, tc_delete_aligned, ...): the block is freed as
 *     free() frees it, uncounted;
 *   - a size (sallocx, mi_usable_size, tc_malloc_size, ...): malloc_usable_size();
 *   - a resize (rallocx, mi_realloc, tc_realloc, reallocarr, ...): the block's bytes
 *     are copied to a block of the allocator's own, which the function then resizes
 *     with its own arguments (alignment, zeroing, heap); the result is the
 *     allocator's, uncounted, as a block the allocator makes itself is, and ours is
 *     freed; if the resize fails, ours is left as it was;
 *   - a resize in place (xallocx, mi_expand): not done; the answer says so.
 */
#ifndef ALLOCINFO_ALLOCATOR_API_H
#define ALLOCINFO_ALLOCATOR_API_H

#include <link.h>

#include "internal.h"

namespace allocinfo {

/* The most functions routed (every one that jemalloc, tcmalloc or mimalloc defines). */
constexpr unsigned ALLOCATOR_API_MAX = 72;

/* The functions of the table that `allocator` defines and that the process's calls
 * reach there (no object before it in lookup order defines them too): their names
 * and the entry points that calls of them should lead to, at most `max`. The
 * allocator's own symbols for them lead to the entry points from then on (route.h's
 * redirect_symbol()), so this is asked once, at start-up. */
unsigned allocator_api_entries(struct link_map *allocator, const char **names, void **fns,
			       unsigned max) HIDDEN;

} /* namespace allocinfo */

#endif
