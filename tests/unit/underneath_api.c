/* SPDX-License-Identifier: MIT */
/*
 * The allocator's own functions that take a block (jemalloc's dallocx, sdallocx,
 * sallocx, rallocx, xallocx; tcmalloc's tc_free, tc_free_sized, tc_realloc,
 * tc_malloc_size; mimalloc's mi_free, mi_free_size, mi_usable_size, mi_realloc,
 * mi_reallocarr, mi_reallocf, mi_expand), called by a program built with allocinfo.h
 * on blocks that malloc made, which carry the library's record: each must see the
 * block's size as malloc_usable_size does, free it and uncount it exactly, and
 * resize it with its contents (a resize that realloc could make is counted at its
 * call); the allocator's statistics must come back to where they were. Its functions
 * that allocate (mallocx, tc_new, mi_zalloc_aligned, mi_strdup, ...) are counted at
 * their calls, exactly, with the alignment and zeroing asked for, and the allocator
 * serves them. Blocks the allocator makes itself (an arena, a heap, a pointer from
 * dlsym) go to it untouched. The same from threads that free each other's blocks,
 * and from a library loaded with dlopen.
 *
 *   underneath_api ALLOCATOR PLUGIN
 *
 * ALLOCATOR is the allocator underneath (jemalloc, tcmalloc or mimalloc), preloaded
 * or linked, in either order with the library; PLUGIN the path of api_plugin.c's
 * library. Prints "ok" and exits 0, or names each failure and exits 1.
 */
#include <allocinfo.h>

#include <dlfcn.h>
#include <malloc.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "site_report.h"

/* Weak: the program runs with whichever allocator is underneath, and calls these
 * through its GOT, as any program linked with the allocator does. */
#define WEAK __attribute__((weak))
WEAK void *mallocx(size_t n, int flags);
WEAK void dallocx(void *p, int flags);
WEAK void sdallocx(void *p, size_t n, int flags);
WEAK size_t sallocx(const void *p, int flags);
WEAK void *rallocx(void *p, size_t n, int flags);
WEAK size_t xallocx(void *p, size_t n, size_t extra, int flags);
WEAK size_t nallocx(size_t n, int flags);
WEAK int mallctl(const char *name, void *old, size_t *oldlen, void *new_value, size_t newlen);
WEAK void *tc_malloc(size_t n);
WEAK void tc_free(void *p);
WEAK void tc_free_sized(void *p, size_t n);
WEAK void tc_cfree(void *p);
WEAK void *tc_realloc(void *p, size_t n);
WEAK size_t tc_malloc_size(void *p);
WEAK size_t MallocExtension_GetAllocatedSize(const void *p);
WEAK int MallocExtension_GetNumericProperty(const char *name, size_t *value);
WEAK void *mi_malloc(size_t n);
WEAK void mi_free(void *p);
WEAK void mi_free_size(void *p, size_t n);
WEAK void mi_free_size_aligned(void *p, size_t n, size_t align);
WEAK size_t mi_usable_size(const void *p);
WEAK size_t mi_good_size(size_t n);
WEAK void *mi_realloc(void *p, size_t n);
WEAK void *mi_reallocf(void *p, size_t n);
WEAK int mi_reallocarr(void *pp, size_t count, size_t size);
WEAK void *mi_expand(void *p, size_t n);
WEAK void *tc_calloc(size_t n, size_t m);
WEAK void *tc_memalign(size_t align, size_t n);
WEAK int tc_posix_memalign(void **pp, size_t align, size_t n);
WEAK void *tc_new(size_t n);
WEAK void *tc_newarray_nothrow(size_t n, const void *nothrow);
WEAK void tc_delete(void *p);
WEAK void *mi_calloc(size_t n, size_t m);
WEAK void *mi_zalloc(size_t n);
WEAK void *mi_mallocn(size_t count, size_t n);
WEAK void *mi_malloc_aligned(size_t n, size_t align);
WEAK void *mi_zalloc_aligned(size_t n, size_t align);
WEAK void *mi_calloc_aligned(size_t count, size_t n, size_t align);
WEAK void *mi_malloc_aligned_at(size_t n, size_t align, size_t offset);
WEAK char *mi_strdup(const char *s);
WEAK char *mi_strndup(const char *s, size_t n);
WEAK void *mi_new_n(size_t count, size_t n);
WEAK void *mi_reallocn(void *p, size_t count, size_t n);
WEAK void *mi_heap_get_default(void);
WEAK void *mi_heap_malloc(void *heap, size_t n);
WEAK char *mi_realpath(const char *name, char *resolved);
WEAK size_t tc_nallocx(size_t n, int flags);

#define MALLOCX_LG_ALIGN(la) ((int)(la))
#define MALLOCX_ZERO ((int)0x40)
#define MALLOCX_TCACHE_NONE ((int)(1 << 8))

static const char *allocator;
static int failures;
static long long k = 1;	/* blocks counted: 0 with ALLOCINFO=never */

#define check(cond, ...) do { \
	if (!(cond)) { \
		printf("%s:%d: %s: ", __FILE__, __LINE__, allocator); \
		printf(__VA_ARGS__); \
		printf("\n"); \
		failures++; \
	} \
} while (0)

static int is(const char *name)
{
	return !strcmp(allocator, name);
}

/* The allocator's own size of a block of n bytes (its size class): through dlsym(),
 * since the program's calls of nallocx and mi_good_size answer for the library's
 * blocks (check_size_predictions()). */
static size_t size_class(size_t n)
{
	if (is("mimalloc"))
		return ((size_t (*)(size_t))dlsym(RTLD_DEFAULT, "mi_good_size"))(n);
	return ((size_t (*)(size_t, int))dlsym(RTLD_DEFAULT, "nallocx"))(n, 0);
}

/* Bytes the allocator has handed out, or -1 where it keeps no such figure. */
static long long allocator_bytes(void)
{
	size_t bytes, len = sizeof(bytes);
	if (is("jemalloc")) {
		uint64_t epoch = 1;
		size_t elen = sizeof(epoch);
		/* Its thread cache's blocks count as allocated until flushed. */
		mallctl("thread.tcache.flush", NULL, NULL, NULL, 0);
		mallctl("epoch", &epoch, &elen, &epoch, elen);
		return mallctl("stats.allocated", &bytes, &len, NULL, 0) ? -1 : (long long)bytes;
	}
	if (is("tcmalloc"))
		return MallocExtension_GetNumericProperty("generic.current_allocated_bytes", &bytes)
			       ? (long long)bytes : -1;
	return -1;
}

/* What the allocator says of the block's size, by each of its functions. */
static size_t api_size(void *p)
{
	if (is("jemalloc"))
		return sallocx(p, 0);
	if (is("tcmalloc")) {
		size_t n = tc_malloc_size(p);
		return n == MallocExtension_GetAllocatedSize(p) ? n : 0;
	}
	return mi_usable_size(p);
}

static void api_free(void *p)
{
	if (is("jemalloc"))
		dallocx(p, 0);
	else if (is("tcmalloc"))
		tc_free(p);
	else
		mi_free(p);
}

static void api_free_sized(void *p, size_t n)
{
	if (is("jemalloc"))
		sdallocx(p, n, 0);
	else if (is("tcmalloc"))
		tc_free_sized(p, n);
	else
		mi_free_size(p, n);
}

/* The sized free of a block made with an alignment: the alignment is part of the
 * size's meaning (jemalloc's sdallocx() takes the flags the block was made with,
 * and trusts them: freed as 192 bytes, the 4096-byte block of mallocx(192,
 * MALLOCX_LG_ALIGN(12)) goes to the 192-byte class's cache, and a later mallocx()
 * of that class returns it). tcmalloc has no such free for C: its plain one. */
static void api_free_aligned_sized(void *p, size_t n, size_t align)
{
	if (!align)
		api_free_sized(p, n);
	else if (is("jemalloc"))
		sdallocx(p, n, MALLOCX_LG_ALIGN(__builtin_ctzl(align)));
	else if (is("tcmalloc"))
		tc_free(p);
	else
		mi_free_size_aligned(p, n, align);
}

/* The line and function of the last call of the allocator's own resize or malloc,
 * where that block is counted. AT() keeps the call from being a tail call, whose
 * return address would be the caller's. */
static int api_line;
static const char *api_func;

static inline void *kept(void *p)
{
	__asm__ volatile("" : "+r"(p));
	return p;
}
#define AT(call) (api_line = __LINE__, api_func = __func__, kept(call))

static void *api_realloc(void *p, size_t n)
{
	if (is("jemalloc"))
		return AT(rallocx(p, n, 0));
	if (is("tcmalloc"))
		return AT(tc_realloc(p, n));
	return AT(mi_realloc(p, n));
}

static void *api_malloc(size_t n)
{
	if (is("jemalloc"))
		return AT(mallocx(n, 0));
	if (is("tcmalloc"))
		return AT(tc_malloc(n));
	return AT(mi_malloc(n));
}

/* A block that the allocator makes itself, uncounted: jemalloc's without a thread
 * cache, mimalloc's from a heap named, tcmalloc's from the pointer dlsym() gives. */
static void *own_malloc(size_t n)
{
	if (is("jemalloc"))
		return mallocx(n, MALLOCX_TCACHE_NONE);
	if (is("mimalloc"))
		return mi_heap_malloc(mi_heap_get_default(), n);
	void *(*fn)(size_t) = (void *(*)(size_t))dlsym(RTLD_DEFAULT, "tc_malloc");
	return fn ? fn(n) : NULL;
}

static int holds(const unsigned char *p, size_t n, unsigned char v)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] != v)
			return 0;
	return 1;
}

static void expect_site(int line, const char *func, long long bytes, long long calls,
			const char *what)
{
	struct site_counts c = site_lookup(__FILE__, line, func);
	check((c.found || !bytes) && c.bytes == bytes && c.calls == (unsigned long long)calls,
	      "%s: %lld bytes in %llu calls, not %lld in %lld", what, c.bytes, c.calls, bytes,
	      calls);
}

/* One block of n bytes (filled with v), resized by the allocator's own function of
 * kind `op`, then freed: its line must be back at nothing, and the resize's line holds
 * the new block when realloc() could have made it. */
static void resize_one(int op, size_t n, unsigned char v)
{
	int line = __LINE__ + 1;
	unsigned char *p = malloc(n);
	memset(p, v, n);
	expect_site(line, "resize_one", k * (long long)n, k, "before the resize");
	unsigned char *q = NULL;
	size_t grown = n + 5000;
	int counted = 1;
	switch (op) {
	case 0:
		q = api_realloc(p, grown);
		break;
	case 1:	/* aligned, or by another form of the same */
		if (is("jemalloc")) {
			q = AT(rallocx(p, grown, MALLOCX_LG_ALIGN(6)));
			check((uintptr_t)q % 64 == 0, "rallocx(MALLOCX_LG_ALIGN(6)) gave %p", (void *)q);
			counted = 0;	/* jemalloc's, resized by it */
		} else if (is("mimalloc")) {
			q = AT(mi_reallocf(p, grown));
		} else {
			q = AT(tc_realloc(p, grown));
		}
		break;
	case 2:	/* smaller */
		grown = n / 2;
		q = api_realloc(p, grown);
		break;
	default:	/* NetBSD's form, where the allocator has it */
		if (is("mimalloc")) {
			q = p;
			grown = 10 * (grown / 10 + 1);
			api_line = __LINE__ + 1, api_func = __func__;
			check(mi_reallocarr(&q, 10, grown / 10) == 0, "mi_reallocarr failed");
		} else {
			q = api_realloc(p, grown);
		}
	}
	check(q != NULL, "resize %d of a %zu-byte block failed", op, n);
	if (!q)
		return;
	check(holds(q, grown < n ? grown : n, v), "resize %d lost the block's contents", op);
	check(api_size(q) >= grown && api_size(q) == malloc_usable_size(q),
	      "resize %d: the allocator's size %zu, malloc_usable_size %zu, for %zu bytes", op,
	      api_size(q), malloc_usable_size(q), grown);
	memset(q, v, grown);
	expect_site(line, "resize_one", 0, 0, "after the resize");
	expect_site(api_line, api_func, counted * k * (long long)grown, counted * k,
		    "the resize's line");
	if (op == 1)
		free(q);	/* malloc's free takes it too */
	else
		api_free(q);
	expect_site(api_line, api_func, 0, 0, "the resize's line, freed");
}

/* A resize the allocator cannot make leaves the block as it was, counted; tcmalloc's
 * resize to 0 bytes frees it, as its realloc does. */
static void check_failed_resize(void)
{
	int line = __LINE__ + 1;
	unsigned char *p = malloc(300);
	memset(p, 5, 300);
	size_t huge = (size_t)1 << 62;	/* more than the address space */
	void *q;
	if (is("mimalloc")) {
		void *pp = p;
		check(mi_reallocarr(&pp, 2, huge) != 0 && pp == p, "mi_reallocarr of 2^63 bytes");
		q = mi_realloc(p, huge);
	} else {
		q = api_realloc(p, huge);
	}
	check(q == NULL, "a resize to 2^62 bytes gave %p", q);
	check(holds(p, 300, 5) && malloc_usable_size(p) >= 300, "a failed resize spoiled the block");
	expect_site(line, "check_failed_resize", k * 300, k, "after a failed resize");
	if (is("tcmalloc")) {
		check(tc_realloc(p, 0) == NULL, "tc_realloc(p, 0) did not free");
	} else if (is("mimalloc")) {
		check(mi_reallocf(p, huge) == NULL, "mi_reallocf of 2^62 bytes");	/* frees p */
	} else {
		free(p);
	}
	expect_site(line, "check_failed_resize", 0, 0, "freed");
}

static void check_blocks_of_malloc(void)
{
	enum { N = 60 };
	unsigned char *b[N];
	int line = 0;
	long long bytes = 0;
	for (int i = 0; i < N; i++) {
		line = __LINE__ + 1;
		b[i] = malloc(100 + (size_t)i);
		memset(b[i], i, 100 + (size_t)i);
		bytes += 100 + i;
	}
	expect_site(line, "check_blocks_of_malloc", k * bytes, k * N, "malloc's blocks");
	for (int i = 0; i < N; i++) {
		size_t n = 100 + (size_t)i;
		size_t usable = malloc_usable_size(b[i]);
		check(usable >= n && api_size(b[i]) == usable,
		      "a %zu-byte block: the allocator's size %zu, malloc_usable_size %zu", n,
		      api_size(b[i]), usable);
		check(holds(b[i], n, (unsigned char)i), "block %d was overwritten", i);
		switch (i % 4) {
		case 0:
			api_free(b[i]);
			break;
		case 1:
			api_free_sized(b[i], n);
			break;
		case 2:	/* not resized in place: the answer says so */
			if (is("jemalloc"))
				check(xallocx(b[i], n + 4000, 0, 0) == usable,
				      "xallocx of a %zu-byte block", n);
			else if (is("mimalloc"))
				check(mi_expand(b[i], n) == b[i] && mi_expand(b[i], n + 4000) == NULL,
				      "mi_expand of a %zu-byte block", n);
			else
				tc_cfree(b[i]), b[i] = NULL;
			free(b[i]);
			break;
		default:
			api_free(b[i]);
		}
	}
	expect_site(line, "check_blocks_of_malloc", 0, 0, "freed by the allocator's functions");
	for (int op = 0; op < 4; op++)
		for (size_t n = 24; n <= 24 << 10; n *= 4)
			resize_one(op, n, (unsigned char)(op * 16 + 1));
}

/* Aligned blocks (their record in the padding in front, or at their end): measured,
 * resized and freed by the allocator's functions. */
static void check_aligned_blocks(void)
{
	static const size_t aligns[] = { 32, 64, 256, 4096 };
	for (size_t i = 0; i < sizeof(aligns) / sizeof(aligns[0]); i++) {
		size_t a = aligns[i], n = 200 + a;
		int line = __LINE__ + 1;
		unsigned char *p = aligned_alloc(a, n);
		check(p && (uintptr_t)p % a == 0, "aligned_alloc(%zu, %zu) gave %p", a, n, (void *)p);
		if (!p)
			continue;
		memset(p, 9, n);
		expect_site(line, "check_aligned_blocks", k * (long long)n, k, "an aligned block");
		check(api_size(p) == malloc_usable_size(p) && api_size(p) >= n,
		      "aligned to %zu: the allocator's size %zu, malloc_usable_size %zu", a,
		      api_size(p), malloc_usable_size(p));
		if (i % 2) {
			api_free(p);
		} else {
			unsigned char *q = api_realloc(p, n * 4);
			check(q && holds(q, n, 9), "aligned to %zu, resized: contents lost", a);
			api_free(q);
		}
		expect_site(line, "check_aligned_blocks", 0, 0, "an aligned block, freed");
	}
}

/* The library's aligned blocks are aligned, even where mimalloc 2.0.9 alone gives a
 * block of a power-of-two size up to 1 KiB without the alignment asked for: the
 * library asks it for the size and the alignment (aligned_alloc(512, 512): 1 KiB
 * aligned to 512). With ALLOCINFO=never the allocator answers alone. */
static void check_aligned_sizes(void)
{
	if (!k)
		return;
	for (size_t a = 32; a <= 2048; a *= 2)
		for (size_t n = a / 2; n <= 2 * a; n *= 2) {
			int line = __LINE__ + 1;
			void *p = aligned_alloc(a, n);
			check(p && (uintptr_t)p % a == 0, "aligned_alloc(%zu, %zu) gave %p", a, n, p);
			expect_site(line, "check_aligned_sizes", (long long)n, 1, "aligned_alloc");
			free(p);
			if (is("mimalloc")) {
				p = AT(mi_malloc_aligned(n, a));
				check(p && (uintptr_t)p % a == 0, "mi_malloc_aligned(%zu, %zu) gave %p",
				      n, a, p);
				expect_site(api_line, api_func, (long long)n, 1, "mi_malloc_aligned");
				mi_free(p);
			}
		}
}

/* The allocator's statistics: large blocks freed by its functions go back in full. */
static void check_statistics(void)
{
	enum { N = 8, BIG = 1 << 20 };
	long long before = allocator_bytes();
	if (before < 0)
		return;
	void *b[N];
	for (int i = 0; i < N; i++)
		b[i] = malloc(BIG);
	long long held = allocator_bytes() - before;
	check(held == k * N * (long long)size_class(BIG + 16) + (1 - k) * N * (long long)size_class(BIG),
	      "the allocator's bytes moved by %lld for %d blocks of %d", held, N, BIG);
	for (int i = 0; i < N; i++)
		if (i % 2)
			api_free(b[i]);
		else
			api_free_sized(b[i], BIG);
	check(allocator_bytes() == before, "after the allocator's frees its bytes are %lld, not %lld",
	      allocator_bytes(), before);
	for (int i = 0; i < N; i++)
		b[i] = api_malloc(BIG);
	held = allocator_bytes() - before;
	check(held == k * N * (long long)size_class(BIG + 16) + (1 - k) * N * (long long)size_class(BIG),
	      "its own malloc: the allocator's bytes moved by %lld for %d blocks of %d", held, N,
	      BIG);
	expect_site(api_line, api_func, k * N * BIG, k * N, "its own malloc's large blocks");
	before = allocator_bytes() - held;	/* reading the report keeps memory of its own */
	for (int i = 0; i < N; i++)
		free(b[i]);
	check(allocator_bytes() == before, "after free() its bytes are %lld, not %lld",
	      allocator_bytes(), before);
	expect_site(api_line, api_func, 0, 0, "its own malloc's large blocks, freed");
}

/* Blocks it makes itself: the library leaves them to it. */
static void check_own_blocks(void)
{
	for (size_t n = 8; n <= 1 << 20; n *= 8) {
		unsigned char *p = own_malloc(n);
		check(p != NULL, "the allocator's own malloc(%zu)", n);
		memset(p, 7, n);
		check(api_size(p) == size_class(n) && malloc_usable_size(p) == api_size(p),
		      "its own %zu-byte block: size %zu, malloc_usable_size %zu, class %zu", n,
		      api_size(p), malloc_usable_size(p), size_class(n));
		p = api_realloc(p, n * 3);	/* now counted where it was resized */
		check(p && holds(p, n, 7), "its own block, resized by it");
		expect_site(api_line, api_func, k * 3 * (long long)n, k, "its own block, resized");
		api_free(p);
		expect_site(api_line, api_func, 0, 0, "its own block, resized, freed");
	}
}

/* One block of the allocator's allocating functions: counted at the line that
 * called it, n bytes, aligned to `align` and zeroed when asked; measured and freed by
 * the allocator's functions. */
static void expect_made(void *p, size_t n, size_t align, int zero, const char *what)
{
	check(p != NULL, "%s of %zu bytes failed", what, n);
	if (!p)
		return;
	expect_site(api_line, api_func, k * (long long)n, k, what);
	check(!align || (uintptr_t)p % align == 0, "%s: %p is not aligned to %zu", what, p, align);
	check(!zero || holds(p, n, 0), "%s: not zeroed", what);
	check(api_size(p) >= n && api_size(p) == malloc_usable_size(p),
	      "%s: the allocator's size %zu, malloc_usable_size %zu, for %zu bytes", what,
	      api_size(p), malloc_usable_size(p), n);
	memset(p, 0x5a, n);
	api_free_aligned_sized(p, n, align);
	expect_site(api_line, api_func, 0, 0, what);
}

static void check_allocating_functions(void)
{
	static const char text[] = "a string the allocator copies";
	for (size_t n = 24; n <= 96 << 10; n *= 8) {
		/* dirty memory first, so that zeroing shows */
		void *dirty = api_malloc(4 * n);
		memset(dirty, 0xff, 4 * n);
		api_free(dirty);
		expect_made(api_malloc(n), n, 0, 0, "its malloc");
		if (is("jemalloc")) {
			expect_made(AT(mallocx(n, MALLOCX_ZERO)), n, 0, 1, "mallocx(MALLOCX_ZERO)");
			expect_made(AT(mallocx(n, MALLOCX_LG_ALIGN(6))), n, 64, 0,
				    "mallocx(MALLOCX_LG_ALIGN(6))");
			expect_made(AT(mallocx(n, MALLOCX_LG_ALIGN(12) | MALLOCX_ZERO)), n, 4096, 1,
				    "mallocx(MALLOCX_LG_ALIGN(12) | MALLOCX_ZERO)");
		} else if (is("tcmalloc")) {
			expect_made(AT(tc_calloc(n, 1)), n, 0, 1, "tc_calloc");
			expect_made(AT(tc_memalign(256, n)), n, 256, 0, "tc_memalign");
			void *p = NULL;
			api_line = __LINE__ + 1, api_func = __func__;
			check(tc_posix_memalign(&p, 128, n) == 0, "tc_posix_memalign");
			expect_made(p, n, 128, 0, "tc_posix_memalign");
			expect_made(AT(tc_new(n)), n, 0, 0, "tc_new");
			char nothrow;
			expect_made(AT(tc_newarray_nothrow(n, &nothrow)), n, 0, 0, "tc_newarray_nothrow");
		} else {
			expect_made(AT(mi_calloc(n, 1)), n, 0, 1, "mi_calloc");
			expect_made(AT(mi_zalloc(n)), n, 0, 1, "mi_zalloc");
			expect_made(AT(mi_mallocn(4, n / 4)), n, 0, 0, "mi_mallocn");
			expect_made(AT(mi_malloc_aligned(n, 512)), n, 512, 0, "mi_malloc_aligned");
			expect_made(AT(mi_zalloc_aligned(n, 64)), n, 64, 1, "mi_zalloc_aligned");
			expect_made(AT(mi_calloc_aligned(2, n / 2, 32)), n, 32, 1, "mi_calloc_aligned");
			expect_made(AT(mi_new_n(n / 8, 8)), n, 0, 0, "mi_new_n");
		}
	}
	if (is("mimalloc")) {
		char *s = AT(mi_strdup(text));
		check(s && !strcmp(s, text), "mi_strdup");
		expect_site(api_line, api_func, k * (long long)sizeof(text), k, "mi_strdup");
		mi_free(s);
		s = AT(mi_strndup(text, 8));
		check(s && !strcmp(s, "a string"), "mi_strndup");
		expect_site(api_line, api_func, k * 9, k, "mi_strndup");
		s = AT(mi_reallocn(s, 3, 100));
		check(s && !strcmp(s, "a string"), "mi_reallocn");
		expect_site(api_line, api_func, k * 300, k, "mi_reallocn");
		mi_free(s);
		/* what only mimalloc serves: an offset alignment, overflow */
		void *p = AT(mi_malloc_aligned_at(100, 64, 16));
		check(p && ((uintptr_t)p + 16) % 64 == 0 && api_size(p) >= 100,
		      "mi_malloc_aligned_at gave %p", p);
		expect_site(api_line, api_func, 0, 0, "mi_malloc_aligned_at, its own");
		mi_free(p);
		check(mi_mallocn(SIZE_MAX / 2, 4) == NULL && mi_malloc_aligned(10, 48) == NULL,
		      "mimalloc's answer to an overflow or a bad alignment");
	}
	if (is("jemalloc")) {	/* an arena or thread cache: jemalloc's block */
		void *p = AT(mallocx(100, MALLOCX_TCACHE_NONE));
		check(p && sallocx(p, 0) == size_class(100), "mallocx(MALLOCX_TCACHE_NONE)");
		expect_site(api_line, api_func, 0, 0, "mallocx(MALLOCX_TCACHE_NONE), its own");
		dallocx(p, MALLOCX_TCACHE_NONE);
	}
}

/* The allocator's own prediction of a block's size (nallocx, tc_nallocx, mi_good_size)
 * is the size its own allocation then has, as each documents: for the library's
 * blocks, whose record takes a part of the allocator's. With ALLOCINFO=never the
 * allocator answers alone, and right. */
static void check_size_predictions(void)
{
	int wrong = 0, tried = 0;
	for (size_t n = 0; n < (1 << 20); n += n < 5000 ? 7 : 4099) {
		for (int lg = 0; lg <= 6; lg += 3) {
			size_t predicted, got;
			void *p;
			if (is("jemalloc")) {
				predicted = nallocx(n, MALLOCX_LG_ALIGN(lg));
				p = mallocx(n, MALLOCX_LG_ALIGN(lg));
				got = sallocx(p, 0);
			} else if (is("tcmalloc")) {
				predicted = tc_nallocx(n, MALLOCX_LG_ALIGN(lg));
				p = lg ? tc_memalign((size_t)1 << lg, n) : tc_malloc(n);
				got = tc_malloc_size(p);
			} else {
				/* mimalloc's own answer is exact up to its medium sizes
				 * only (alone, mi_good_size(131168) is 135168 where the
				 * block has 196608) */
				if (lg || n >= (64 << 10))
					continue;
				predicted = mi_good_size(n);
				p = mi_malloc(n);
				got = mi_usable_size(p);
			}
			tried++;
			check(got == malloc_usable_size(p), "%zu bytes: its size %zu, malloc_usable_size %zu",
			      n, got, malloc_usable_size(p));
			if (predicted != got && wrong++ < 5)
				check(0, "%zu bytes aligned to %d: predicted %zu, made %zu", n, 1 << lg,
				      predicted, got);
			free(p);
		}
	}
	check(!wrong, "%d of %d predictions wrong", wrong, tried);
}

/* malloc(0) makes a block of its own: the address it returns is no other block's. One
 * of 0 bytes is the record alone, and in a 16-byte size class its end was the start
 * of the next block, which free() then took for one of the library's. */
static void check_empty_blocks(void)
{
	enum { N = 1000 };
	static void *empty[N], *own[N];
	int line = 0, shared = 0;
	for (int i = 0; i < N; i++) {
		line = __LINE__ + 1;
		empty[i] = malloc(0);
		own[i] = own_malloc(16);
		memset(own[i], 0x22, 16);
	}
	for (int i = 0; i < N; i++)
		for (int j = 0; j < N; j++)
			shared += empty[i] == own[j];
	check(!shared, "%d blocks of malloc(0) at the address of one of the allocator's", shared);
	for (int i = 0; i < N; i++)
		free(own[i]);
	expect_site(line, "check_empty_blocks", 0, k * N, "malloc(0), the allocator's freed");
	for (int i = 0; i < N; i++)
		free(empty[i]);
	expect_site(line, "check_empty_blocks", 0, 0, "malloc(0), freed");
}

/* mimalloc's mi_realpath() frees what glibc's realpath() made with malloc (a block
 * of the library's) by its own call of free(). Were that mimalloc's free, a heap
 * slot would end the program, and a block with a record would go on mimalloc's
 * free list 16 bytes into itself, to be handed out again over its neighbour: the
 * blocks made after it, each filled to its end, must all keep what they hold. */
static void check_allocator_frees_ours(void)
{
	if (!is("mimalloc"))
		return;
	enum { ROUNDS = 200, BLOCKS = 2000 };
	for (int i = 0; i < ROUNDS; i++) {
		char *s = mi_realpath(".", NULL);
		check(s && s[0] == '/', "mi_realpath(\".\") gave %s", s ? s : "null");
		mi_free(s);
	}
	size_t n = strlen(getenv("PWD") ? getenv("PWD") : "/") + 1;
	static unsigned char *b[BLOCKS];
	for (int i = 0; i < BLOCKS; i++) {
		b[i] = i % 2 ? own_malloc(n + 16) : malloc(n);
		memset(b[i], i & 0xff, malloc_usable_size(b[i]));
	}
	int spoiled = 0;
	for (int i = 0; i < BLOCKS; i++)
		spoiled += !holds(b[i], malloc_usable_size(b[i]), (unsigned char)(i & 0xff));
	check(!spoiled, "after mi_realpath(), %d of %d blocks overlap another", spoiled, BLOCKS);
	for (int i = 0; i < BLOCKS; i++)
		free(b[i]);
}

/* Threads: each frees, by the allocator's functions, the blocks another made. */
enum { THREADS = 4, PER_THREAD = 2000 };
static void *thread_blocks[THREADS][PER_THREAD];
static int thread_line;

static void *make(void *arg)
{
	void **b = arg;
	for (int i = 0; i < PER_THREAD; i++) {
		thread_line = __LINE__ + 1;
		b[i] = i % 2 ? malloc(48) : api_malloc(48);
	}
	return NULL;
}

static void *release(void *arg)
{
	void **b = arg;
	for (int i = 0; i < PER_THREAD; i++)
		if (i % 2)
			api_free(b[i]);
		else
			api_free_sized(b[i], 48);
	return NULL;
}

static void in_threads(void *(*fn)(void *), int shift)
{
	pthread_t t[THREADS];
	for (int i = 0; i < THREADS; i++)
		pthread_create(&t[i], NULL, fn, thread_blocks[(i + shift) % THREADS]);
	for (int i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
}

static void check_threads(void)
{
	in_threads(make, 0);
	enum { HALF = THREADS * PER_THREAD / 2 };
	expect_site(thread_line, "make", k * HALF * 48, k * HALF, "the threads' blocks");
	expect_site(api_line, api_func, k * HALF * 48, k * HALF, "the threads' blocks by its malloc");
	in_threads(release, 1);
	expect_site(thread_line, "make", 0, 0, "freed by other threads");
	expect_site(api_line, api_func, 0, 0, "its malloc's, freed by other threads");
}

/* A library loaded now calls the allocator's functions too, and so does a pointer
 * that dlsym() gives: both find the library's entry points, in either order. */
static void check_plugin(const char *path)
{
	void *h = dlopen(path, RTLD_NOW);
	check(h != NULL, "dlopen(%s): %s", path, dlerror());
	if (!h)
		return;
	size_t (*size)(const char *, void *) = (size_t (*)(const char *, void *))dlsym(h, "plugin_size");
	void (*release_it)(const char *, void *) = (void (*)(const char *, void *))dlsym(h, "plugin_free");
	int line = __LINE__ + 1;
	void *p = malloc(300);
	check(size(allocator, p) == malloc_usable_size(p), "the loaded library's size %zu, not %zu",
	      size(allocator, p), malloc_usable_size(p));
	release_it(allocator, p);
	expect_site(line, "check_plugin", 0, 0, "freed by the loaded library");
	dlclose(h);

	const char *name = is("jemalloc") ? "dallocx" : is("tcmalloc") ? "tc_free" : "mi_free";
	void *found = dlsym(RTLD_DEFAULT, name);
	check(found != NULL, "no %s from dlsym", name);
	if (!found)
		return;
	line = __LINE__ + 1;
	p = malloc(400);
	if (is("jemalloc"))
		((void (*)(void *, int))found)(p, 0);
	else
		((void (*)(void *))found)(p);
	expect_site(line, "check_plugin", 0, 0, "freed through dlsym's pointer");
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: underneath_api ALLOCATOR PLUGIN\n");
		return 2;
	}
	allocator = argv[1];
	const char *mode = getenv("ALLOCINFO");
	if (mode && !strcmp(mode, "never"))
		k = 0;
	if (!is("jemalloc") && !is("tcmalloc") && !is("mimalloc")) {
		fprintf(stderr, "underneath_api: %s has no functions of its own to try\n", allocator);
		return 2;
	}
	int present = is("jemalloc") ? mallocx != NULL
		      : is("tcmalloc") ? tc_malloc != NULL : mi_malloc != NULL;
	if (!present) {
		printf("%s is not underneath: its functions are missing\n", allocator);
		return 1;
	}
	check_blocks_of_malloc();
	check_failed_resize();
	check_aligned_blocks();
	check_aligned_sizes();
	check_statistics();
	check_own_blocks();
	check_allocating_functions();
	check_size_predictions();
	check_empty_blocks();
	check_allocator_frees_ours();
	check_threads();
	check_plugin(argv[2]);
	if (failures) {
		printf("%s", site_report_text());
		return 1;
	}
	printf("ok\n");
	return 0;
}
