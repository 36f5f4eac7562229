/* SPDX-License-Identifier: MIT */
/*
 * A library built without allocinfo.h, loaded with dlopen by underneath_api.c once
 * the program runs: its calls to the allocator's own functions are those of an
 * object loaded after the process's calls were routed.
 */
#include <stddef.h>
#include <string.h>

#define WEAK __attribute__((weak))
WEAK void dallocx(void *p, int flags);
WEAK size_t sallocx(const void *p, int flags);
WEAK void tc_free(void *p);
WEAK size_t tc_malloc_size(void *p);
WEAK void mi_free(void *p);
WEAK size_t mi_usable_size(const void *p);

size_t plugin_size(const char *allocator, void *p)
{
	if (!strcmp(allocator, "jemalloc"))
		return sallocx(p, 0);
	if (!strcmp(allocator, "tcmalloc"))
		return tc_malloc_size(p);
	return mi_usable_size(p);
}

void plugin_free(const char *allocator, void *p)
{
	if (!strcmp(allocator, "jemalloc"))
		dallocx(p, 0);
	else if (!strcmp(allocator, "tcmalloc"))
		tc_free(p);
	else
		mi_free(p);
}
