/* SPDX-License-Identifier: MIT */
/* Built without allocinfo.h: its allocations reach the library untagged. */
#include <stdlib.h>

#include "plain.h"

const int plain_alloc_line = __LINE__ + 3;
__attribute__((noinline)) void *plain_alloc(size_t n)
{
	void *p = malloc(n);
	__asm__ volatile("" ::: "memory");	/* keep the call a call */
	return p;
}

__attribute__((noinline)) void plain_free(void *p)
{
	free(p);
}
