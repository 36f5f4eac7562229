/* SPDX-License-Identifier: MIT */
/*
 * Resolution of the underlying allocator's functions that glibc does not export
 * under a __libc_ name, and the sanitizer builds' RTLD_NEXT table.
 */
#include "backend.h"

#include <dlfcn.h>
#include <string.h>

namespace allocinfo {
namespace backend {

namespace {
size_t (*next_usable_size)(void *);
}

#ifndef ALLOCINFO_BACKEND_NEXT

void init()
{
}

/* Resolved on first use, when the process is up: dlsym may allocate. */
size_t usable_size(void *p)
{
	auto fn = __atomic_load_n(&next_usable_size, __ATOMIC_ACQUIRE);
	if (!fn) {
		fn = (size_t (*)(void *))dlsym(RTLD_NEXT, "malloc_usable_size");
		__atomic_store_n(&next_usable_size, fn, __ATOMIC_RELEASE);
	}
	return fn ? fn(p) : 0;
}

#else

table g_next;

namespace {
alignas(64) char arena[1 << 20];	/* untouched pages cost nothing */
size_t arena_used;
}

void *bootstrap_alloc(size_t n, size_t align)
{
	if (align < 16)
		align = 16;
	size_t start = (__atomic_load_n(&arena_used, __ATOMIC_RELAXED) + align - 1) & ~(align - 1);
	if (start + n > sizeof(arena) || start + n < start)
		return nullptr;
	arena_used = start + n;
	return memset(arena + start, 0, n);
}

bool owns_bootstrap(const void *p)
{
	return (const char *)p >= arena && (const char *)p < arena + sizeof(arena);
}

void init()
{
	table t;
	t.malloc = (void *(*)(size_t))dlsym(RTLD_NEXT, "malloc");
	t.calloc = (void *(*)(size_t, size_t))dlsym(RTLD_NEXT, "calloc");
	t.realloc = (void *(*)(void *, size_t))dlsym(RTLD_NEXT, "realloc");
	t.free = (void (*)(void *))dlsym(RTLD_NEXT, "free");
	t.memalign = (void *(*)(size_t, size_t))dlsym(RTLD_NEXT, "memalign");
	t.usable_size = (size_t (*)(void *))dlsym(RTLD_NEXT, "malloc_usable_size");
	g_next = t;
	next_usable_size = t.usable_size;
}

size_t usable_size(void *p)
{
	if (owns_bootstrap(p))
		return 0;
	return next_usable_size ? next_usable_size(p) : 0;
}

#endif

} /* namespace backend */
} /* namespace allocinfo */
