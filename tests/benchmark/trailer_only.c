/* SPDX-License-Identifier: MIT */
/*
 * An 8-byte trailer alone, as a reference for `make bench`: what a record at the end
 * of each block would cost instead of allocinfo's 16 bytes in front. glibc rounds
 * blocks up to 16-byte classes, so 8 bytes more often fit in the slack it leaves.
 * LD_PRELOADed under a baseline program, it asks glibc for 8 bytes more, writes the
 * size asked for in the last 8 bytes of the usable block (found from glibc's chunk
 * size word, as malloc_usable_size does), reads it back at free, and counts nothing.
 *
 * It answers a question of cost only: a trailer lies in bytes a program may have
 * written, so free() could not tell one from a block without it (Documentation/
 * performance.md, "The workloads pay for the record").
 */
#define _GNU_SOURCE

#include "shim.h"

enum { TRAILER = 8 };

/* glibc's usable size of block p: its chunk's size less the header it keeps. */
static size_t usable(const void *p)
{
	size_t word = ((const size_t *)p)[-1];
	size_t chunk = word & ~(size_t)7;
	return chunk - ((word & 2) ? 2 * sizeof(size_t) : sizeof(size_t));
}

static void *finish(void *p, size_t n)
{
	if (p) {
		uint64_t size = n;
		memcpy((char *)p + usable(p) - TRAILER, &size, sizeof(size));
	}
	return p;
}

static int too_big(size_t n)
{
	if (n <= SIZE_MAX - TRAILER)
		return 0;
	errno = ENOMEM;
	return 1;
}

VISIBLE void *malloc(size_t n)
{
	return too_big(n) ? NULL : finish(__libc_malloc(n + TRAILER), n);
}

VISIBLE void *calloc(size_t n, size_t size)
{
	size_t total;
	if (__builtin_mul_overflow(n, size, &total)) {
		errno = ENOMEM;
		return NULL;
	}
	return too_big(total) ? NULL : finish(__libc_calloc(1, total + TRAILER), total);
}

VISIBLE void free(void *p)
{
	if (!p)
		return;
	volatile uint64_t *trailer = (volatile uint64_t *)((char *)p + usable(p) - TRAILER);
	(void)*trailer;	/* the read a real free() would make */
	__libc_free(p);
}

VISIBLE void *realloc(void *p, size_t n)
{
	if (!p)
		return malloc(n);
	if (n == 0) {
		free(p);
		return NULL;
	}
	return too_big(n) ? NULL : finish(__libc_realloc(p, n + TRAILER), n);
}

static void *aligned(size_t align, size_t n)
{
	return too_big(n) ? NULL : finish(__libc_memalign(align, n + TRAILER), n);
}

VISIBLE size_t malloc_usable_size(void *p)
{
	return p ? usable(p) - TRAILER : 0;
}

#include "shim_derived.h"
