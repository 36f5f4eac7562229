/* SPDX-License-Identifier: MIT */
/* A program built without allocinfo.h, for profiler_hooks.sh: one 123457-byte block
 * allocated two calls deep, shrunk in place, freed. Frame pointers and -rdynamic. */
#include <stdlib.h>
#include <string.h>

__attribute__((noinline)) void *hooks_leaf(size_t n)
{
	void *p = malloc(n);
	__asm__ volatile("" ::: "memory");
	return p;
}

__attribute__((noinline)) void *hooks_middle(size_t n)
{
	void *p = hooks_leaf(n);
	__asm__ volatile("" ::: "memory");
	return p;
}

int main(void)
{
	char *p = hooks_middle(123457);
	if (!p)
		return 1;
	memset(p, 1, 123457);
	char *q = realloc(p, 123457 / 2);
	free(q);
	return q == p ? 0 : 2;
}
