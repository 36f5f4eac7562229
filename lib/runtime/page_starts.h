/* SPDX-License-Identifier: MIT */
/*
 * The pointers handed out over another allocator that start a page.
 *
 * free(), realloc() and malloc_usable_size() read the 4 bytes below a pointer to
 * tell a block of ours (a record there) from one without a record. Below a glibc
 * block those bytes are glibc's chunk header. Below a block that jemalloc, tcmalloc or
 * mimalloc made itself (`mallocx`, `tc_malloc`, `mi_malloc`, or `malloc` before the
 * library routed the process's calls) they may be anything, and below one that starts
 * a page they may not be mapped at all: jemalloc puts a 4 MiB block at the start of a
 * fresh mapping, and reading below it ended the program (SIGSEGV).
 *
 * So over another allocator nothing below a pointer that starts a page is read unless
 * the library handed that pointer out itself with a record below, which this set
 * remembers. Such pointers are rare (an aligned block of 4096 or more, or a small one
 * whose allocator block begins 16 bytes before a page: about 1 in 256), so the set is a
 * small open-addressing table under one lock, in pages of its own (never malloc's).
 * Each thread remembers the last page start it found absent (internal.h's
 * known_absent()), for a block of the allocator's own that is asked about again and
 * again. Over glibc the set is never used.
 */
#ifndef ALLOCINFO_PAGE_STARTS_H
#define ALLOCINFO_PAGE_STARTS_H

#include "internal.h"

namespace allocinfo {
namespace page_starts {

/* g_guarded, starts_page() and contains() are in internal.h, for has_record(). */

/* Remembers p, which starts a page, when the set is in use; returns p. */
void *noted(void *p) HIDDEN;

/* p is handed out with a record (or a callback's mark) below it: remembered, when it
 * starts a page and the set is in use. Returns p: the rare case is a tail call, and
 * the common one keeps nothing live across a call (no stack frame). */
static inline void *note(void *p)
{
	if (unlikely(starts_page(p)))
		return noted(p);
	return p;
}

/* Forgets p (freed, or moved by realloc); whether it was there (or, once a pointer
 * could not be noted for want of memory, whether the bytes below it can be read:
 * see contains()). */
bool take(const void *p) HIDDEN;

void fork_prepare() HIDDEN;
void fork_parent() HIDDEN;
void fork_child() HIDDEN;

} /* namespace page_starts */

} /* namespace allocinfo */

#endif
