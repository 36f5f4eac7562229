/* SPDX-License-Identifier: MIT */
/*
 * A library of nested allocation wrappers, as interpreters and toolkits have: a
 * checked malloc, a second level over it, a realloc and a strdup, handed out through
 * a table of function pointers. Built twice: with allocinfo.h (each malloc tagged
 * with this file's lines) and without (the program's calls reach the library's malloc
 * untagged).
 */
#include <stdlib.h>
#include <string.h>

#include "wrappers_lib.h"

/* Neither inlined nor tail-called: each level keeps its frame, as real ones do. */
#define KEEP_FRAME() __asm__ volatile("" ::: "memory")

__attribute__((noinline)) void *fix_alloc(size_t n)
{
	void *p = malloc(n);
	if (!p)
		abort();
	KEEP_FRAME();
	return p;
}

__attribute__((noinline)) void *fix_alloc2(size_t n)
{
	char *p = fix_alloc(n);
	p[0] = 0;
	KEEP_FRAME();
	return p;
}

__attribute__((noinline)) void *fix_realloc(void *p, size_t n)
{
	void *q = realloc(p, n);
	if (!q)
		abort();
	KEEP_FRAME();
	return q;
}

__attribute__((noinline)) char *fix_strdup(const char *s)
{
	char *p = fix_alloc2(strlen(s) + 1);
	strcpy(p, s);
	KEEP_FRAME();
	return p;
}

const struct fix_ops fix_ops = { fix_alloc, fix_alloc2, fix_realloc, fix_strdup };
