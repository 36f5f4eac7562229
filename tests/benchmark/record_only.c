/* SPDX-License-Identifier: MIT */
/*
 * The record alone, as a reference for `make bench`: LD_PRELOADed under a baseline
 * program, it gives every block a 16-byte header in front, as allocinfo's record
 * does, and counts nothing. The difference between this column and the baseline is
 * what the record's memory costs; between it and the library's columns, what
 * counting costs.
 *
 * The header keeps the size asked for and how far below the pointer the block
 * begins (16, or the alignment for larger ones). calloc calls glibc's calloc, not
 * malloc and memset, which the compiler would turn back into a call to calloc.
 */
#define _GNU_SOURCE
#include <dlfcn.h>

#include "shim.h"

struct header {
	size_t size;	/* bytes asked for */
	size_t offset;	/* from the block's start to the pointer */
};

static struct header *header_of(void *p)
{
	return (struct header *)p - 1;
}

static void *finish(char *block, size_t offset, size_t n)
{
	if (!block)
		return NULL;
	struct header *h = (struct header *)(block + offset) - 1;
	h->size = n;
	h->offset = offset;
	return block + offset;
}

VISIBLE void *malloc(size_t n)
{
	if (n > SIZE_MAX - sizeof(struct header)) {
		errno = ENOMEM;
		return NULL;
	}
	return finish(__libc_malloc(n + sizeof(struct header)), sizeof(struct header), n);
}

VISIBLE void *calloc(size_t n, size_t size)
{
	size_t total;
	if (__builtin_mul_overflow(n, size, &total) ||
	    total > SIZE_MAX - sizeof(struct header)) {
		errno = ENOMEM;
		return NULL;
	}
	return finish(__libc_calloc(1, total + sizeof(struct header)),
		      sizeof(struct header), total);
}

VISIBLE void free(void *p)
{
	if (p)
		__libc_free((char *)p - header_of(p)->offset);
}

static void *aligned(size_t align, size_t n)
{
	if (align <= sizeof(struct header))
		return malloc(n);
	if (align & (align - 1)) {
		errno = EINVAL;
		return NULL;
	}
	if (n > SIZE_MAX - align) {
		errno = ENOMEM;
		return NULL;
	}
	return finish(__libc_memalign(align, n + align), align, n);
}

VISIBLE size_t malloc_usable_size(void *p)
{
	if (!p)
		return 0;
	static size_t (*next)(void *);
	size_t (*fn)(void *) = __atomic_load_n(&next, __ATOMIC_ACQUIRE);
	if (!fn) {
		fn = (size_t (*)(void *))dlsym(RTLD_NEXT, "malloc_usable_size");
		__atomic_store_n(&next, fn, __ATOMIC_RELEASE);
	}
	char *block = (char *)p - header_of(p)->offset;
	return fn(block) - header_of(p)->offset;
}

VISIBLE void *realloc(void *p, size_t n)
{
	if (!p)
		return malloc(n);
	if (n == 0) {
		free(p);
		return NULL;
	}
	struct header *h = header_of(p);
	if (h->offset == sizeof(struct header)) {
		if (n > SIZE_MAX - sizeof(struct header)) {
			errno = ENOMEM;
			return NULL;
		}
		return finish(__libc_realloc(h, n + sizeof(struct header)),
			      sizeof(struct header), n);
	}
	void *q = malloc(n);
	if (q) {
		memcpy(q, p, h->size < n ? h->size : n);
		free(p);
	}
	return q;
}

#include "shim_derived.h"
