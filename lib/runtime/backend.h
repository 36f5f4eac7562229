/* SPDX-License-Identifier: MIT */
/*
 * The allocator underneath: glibc's, called through its __libc_* entry points so the
 * call is direct and never comes back into our own exported malloc.
 *
 * Builds for AddressSanitizer or ThreadSanitizer (ALLOCINFO_BACKEND_NEXT) use the
 * next definition in symbol lookup order instead (the sanitizer's allocator), found
 * with dlsym(RTLD_NEXT). dlsym itself may allocate before that is known; those few
 * requests are served from a static arena (bootstrap_*), recognised again at free.
 */
#ifndef ALLOCINFO_BACKEND_H
#define ALLOCINFO_BACKEND_H

#include "internal.h"

extern "C" {
void *__libc_malloc(size_t) noexcept;
void *__libc_calloc(size_t, size_t) noexcept;
void *__libc_realloc(void *, size_t) noexcept;
void __libc_free(void *) noexcept;
void *__libc_memalign(size_t, size_t) noexcept;
}

namespace allocinfo {
namespace backend {

#ifndef ALLOCINFO_BACKEND_NEXT

static inline void *malloc(size_t n) { return __libc_malloc(n); }
static inline void *calloc(size_t n, size_t s) { return __libc_calloc(n, s); }
static inline void *realloc(void *p, size_t n) { return __libc_realloc(p, n); }
static inline void free(void *p) { __libc_free(p); }
static inline void *memalign(size_t a, size_t n) { return __libc_memalign(a, n); }
static inline bool owns_bootstrap(const void *) { return false; }
void init() HIDDEN;
size_t usable_size(void *p) HIDDEN;	/* glibc's malloc_usable_size */

#else

struct table {
	void *(*malloc)(size_t);
	void *(*calloc)(size_t, size_t);
	void *(*realloc)(void *, size_t);
	void (*free)(void *);
	void *(*memalign)(size_t, size_t);
	size_t (*usable_size)(void *);
};
extern table g_next HIDDEN;
void *bootstrap_alloc(size_t n, size_t align) HIDDEN;
bool owns_bootstrap(const void *p) HIDDEN;

static inline void *malloc(size_t n)
{ return g_next.malloc ? g_next.malloc(n) : bootstrap_alloc(n, 16); }
static inline void *calloc(size_t n, size_t s)
{
	if (g_next.calloc)
		return g_next.calloc(n, s);
	size_t t;
	return __builtin_mul_overflow(n, s, &t) ? nullptr : bootstrap_alloc(t, 16);
}
static inline void *realloc(void *p, size_t n) { return g_next.realloc(p, n); }
static inline void free(void *p) { if (!owns_bootstrap(p)) g_next.free(p); }
static inline void *memalign(size_t a, size_t n)
{ return g_next.memalign ? g_next.memalign(a, n) : bootstrap_alloc(n, a); }
void init() HIDDEN;
size_t usable_size(void *p) HIDDEN;

#endif

} /* namespace backend */
} /* namespace allocinfo */

#endif
