/* SPDX-License-Identifier: MIT */
/* What the interposed introspection (introspection.cpp) offers the rest of the
 * library. */
#ifndef ALLOCINFO_INTROSPECTION_H
#define ALLOCINFO_INTROSPECTION_H

#include "internal.h"

namespace allocinfo {

/* The allocator underneath gives back the free memory it can: glibc's
 * malloc_trim(pad) (the next definition's), without the small-block heap's part.
 * glibc gives back the free pages inside its arenas, and the top beyond pad. */
void trim_underneath(size_t pad) HIDDEN;

} /* namespace allocinfo */

#endif
