/* SPDX-License-Identifier: MIT */
/* The definition of a function that the library's own one stands in front of. */
#ifndef ALLOCINFO_NEXT_DEFINITION_H
#define ALLOCINFO_NEXT_DEFINITION_H

#include <dlfcn.h>

#include "internal.h"

namespace allocinfo {

/* The next definition of name after the library's, looked up once and kept in
 * *cache; null where there is none. dlsym may allocate: charged to nothing. */
template <typename Fn> Fn next_definition(Fn *cache, const char *name)
{
	Fn fn = __atomic_load_n(cache, __ATOMIC_ACQUIRE);
	if (!fn) {
		busy_guard guard;
		fn = reinterpret_cast<Fn>(dlsym(RTLD_NEXT, name));
		__atomic_store_n(cache, fn, __ATOMIC_RELEASE);
	}
	return fn;
}

} /* namespace allocinfo */

#endif
