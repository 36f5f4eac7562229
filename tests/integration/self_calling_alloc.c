/* SPDX-License-Identifier: MIT */
/*
 * An allocator whose functions call one another by their exported names, through its
 * PLT, as Electric Fence's do (its malloc() is memalign(), its realloc() is malloc(),
 * a copy and free()). Preloaded after liballocinfo, each of those calls is bound to
 * the library's definition, which hands it back to the allocator: the library must
 * point the allocator's own calls back at the allocator (route_allocator_makes()), or
 * malloc() recurses until the stack runs out.
 *
 * Its blocks are glibc's (__libc_memalign), each with a header in front that says
 * the size asked for and where the block starts. self_calling_bytes() says how many
 * bytes it holds for its callers, self_calling_usable() the usable size of a block it
 * made (the size asked for, exactly), so that a test can tell it served a block;
 * self_calling_malloc() makes a block of its own, without the library.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

void *__libc_memalign(size_t align, size_t n);
void __libc_free(void *p);

struct header {
	size_t size;	/* asked for */
	size_t offset;	/* from the start of glibc's block to the caller's pointer */
};

static size_t live_bytes;

static struct header *header_of(void *p)
{
	return (struct header *)p - 1;
}

/* Everything else comes here, by name. */
void *memalign(size_t align, size_t n)
{
	if (align & (align - 1)) {
		errno = EINVAL;
		return NULL;
	}
	if (align < 16)
		align = 16;
	size_t offset = align < sizeof(struct header) ? sizeof(struct header) : align;
	if (n > SIZE_MAX - offset) {
		errno = ENOMEM;
		return NULL;
	}
	char *base = __libc_memalign(align, n + offset);
	if (!base)
		return NULL;
	char *p = base + offset;
	header_of(p)->size = n;
	header_of(p)->offset = offset;
	__atomic_add_fetch(&live_bytes, n, __ATOMIC_RELAXED);
	return p;
}

void *malloc(size_t n)
{
	return memalign(16, n);
}

void *calloc(size_t n, size_t size)
{
	size_t total;
	if (__builtin_mul_overflow(n, size, &total)) {
		errno = ENOMEM;
		return NULL;
	}
	void *p = malloc(total);
	return p ? memset(p, 0, total) : NULL;
}

void free(void *p)
{
	if (!p)
		return;
	__atomic_sub_fetch(&live_bytes, header_of(p)->size, __ATOMIC_RELAXED);
	__libc_free((char *)p - header_of(p)->offset);
}

void *realloc(void *p, size_t n)
{
	if (!p)
		return malloc(n);
	void *q = malloc(n);
	if (!q)
		return NULL;
	size_t old = header_of(p)->size;
	memcpy(q, p, old < n ? old : n);
	free(p);
	return q;
}

int posix_memalign(void **out, size_t align, size_t n)
{
	if (align % sizeof(void *) || (align & (align - 1)))
		return EINVAL;
	void *p = memalign(align, n);
	if (!p)
		return ENOMEM;
	*out = p;
	return 0;
}

void *aligned_alloc(size_t align, size_t n)
{
	return memalign(align, n);
}

void *valloc(size_t n)
{
	return memalign((size_t)sysconf(_SC_PAGESIZE), n);
}

size_t malloc_usable_size(void *p)
{
	return p ? header_of(p)->size : 0;
}

/* malloc() by name, as the allocator's own calls are: never the library's. */
void *self_calling_malloc(size_t n)
{
	return malloc(n);
}

size_t self_calling_usable(void *p)
{
	return malloc_usable_size(p);
}

size_t self_calling_bytes(void)
{
	return __atomic_load_n(&live_bytes, __ATOMIC_RELAXED);
}
