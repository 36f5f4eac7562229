/* SPDX-License-Identifier: MIT */
/*
 * The entry points of a reference shim (record_only.c, trailer_only.c) that reduce
 * to its realloc() and to a static aligned(align, n): included once, after both
 * (shim.h first).
 */
#ifndef SHIM_DERIVED_H
#define SHIM_DERIVED_H

VISIBLE void *reallocarray(void *p, size_t n, size_t size)
{
	size_t total;
	if (__builtin_mul_overflow(n, size, &total)) {
		errno = ENOMEM;
		return NULL;
	}
	return realloc(p, total);
}

VISIBLE void *memalign(size_t align, size_t n) { return aligned(align, n); }
VISIBLE void *aligned_alloc(size_t align, size_t n) { return aligned(align, n); }
VISIBLE void *valloc(size_t n) { return aligned((size_t)sysconf(_SC_PAGESIZE), n); }

VISIBLE void *pvalloc(size_t n)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	return aligned(page, (n + page - 1) & ~(page - 1));
}

VISIBLE int posix_memalign(void **out, size_t align, size_t n)
{
	if (align < sizeof(void *) || (align & (align - 1)))
		return EINVAL;
	void *p = aligned(align, n);
	if (!p)
		return ENOMEM;
	*out = p;
	return 0;
}

#endif
