/* SPDX-License-Identifier: MIT */
/*
 * The header's inline fast path: a tagged malloc, calloc, strdup or strndup that may
 * be counted in the caller is, without calling the library; everything else reaches
 * the library, and so do the sizes its small-block heap serves (up to
 * allocinfo__inline_v1.small_max bytes). This program is linked with --wrap for the
 * library's entry points that the inline code falls back to (allocinfo_malloc,
 * allocinfo_calloc; and allocinfo_strdup, allocinfo_strndup where there is no inline
 * code): its calls to them come here, are counted and go on to the library.
 * Counts in the report are exact either way.
 *
 * Built with a sanitizer, the header compiles no inline path and the library would
 * refuse it: every call then falls back, and the tests say so.
 */
#include <allocinfo.h>

#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "site_report.h"

static unsigned long fallbacks;

void *__real_allocinfo_malloc(const struct alloc_tag *t, size_t n);
void *__real_allocinfo_calloc(const struct alloc_tag *t, size_t n, size_t size);

void *__wrap_allocinfo_malloc(const struct alloc_tag *t, size_t n);
void *__wrap_allocinfo_malloc(const struct alloc_tag *t, size_t n)
{
	__atomic_add_fetch(&fallbacks, 1, __ATOMIC_RELAXED);
	return __real_allocinfo_malloc(t, n);
}

void *__wrap_allocinfo_calloc(const struct alloc_tag *t, size_t n, size_t size);
void *__wrap_allocinfo_calloc(const struct alloc_tag *t, size_t n, size_t size)
{
	__atomic_add_fetch(&fallbacks, 1, __ATOMIC_RELAXED);
	return __real_allocinfo_calloc(t, n, size);
}

char *__real_allocinfo_strdup(const struct alloc_tag *t, const char *s);
char *__real_allocinfo_strndup(const struct alloc_tag *t, const char *s, size_t n);

/* Without the inline path, strdup and strndup reach the library as themselves. */
char *__wrap_allocinfo_strdup(const struct alloc_tag *t, const char *s);
char *__wrap_allocinfo_strdup(const struct alloc_tag *t, const char *s)
{
	__atomic_add_fetch(&fallbacks, 1, __ATOMIC_RELAXED);
	return __real_allocinfo_strdup(t, s);
}

char *__wrap_allocinfo_strndup(const struct alloc_tag *t, const char *s, size_t n);
char *__wrap_allocinfo_strndup(const struct alloc_tag *t, const char *s, size_t n)
{
	__atomic_add_fetch(&fallbacks, 1, __ATOMIC_RELAXED);
	return __real_allocinfo_strndup(t, s, n);
}

static unsigned long fallbacks_now(void)
{
	return __atomic_load_n(&fallbacks, __ATOMIC_RELAXED);
}

/* Whether this build can count a tagged allocation inline at all. */
static int inline_built(void)
{
#ifdef ALLOCINFO__INLINE
	return 1;
#else
	return 0;
#endif
}

/* The fallbacks n allocations are expected to make once site and thread are known,
 * when the library's small-block heap is not involved (counting off, or never on). */
static unsigned long expected(unsigned long n)
{
	return inline_built() ? 0 : n;
}

/* The same for one counted allocation of `size` bytes: the library's small-block
 * heap makes the blocks up to small_max itself. */
static unsigned long expected_for(size_t size)
{
	return !inline_built() || size <= allocinfo__inline_v1.small_max ? 1 : 0;
}

/* The size of the i-th block of the tests below: small and large ones. */
static size_t size_of_block(int i)
{
	return (size_t)i * 3 + 1;
}

static int m_line;
static void *m_block(size_t n)
{
	m_line = __LINE__ + 1;
	return malloc(n);
}

static int c_line;
static void *c_block(size_t n, size_t size)
{
	c_line = __LINE__ + 1;
	return calloc(n, size);
}

enum { N = 1000 };

/* Sizes no allocation can have (volatile: the compiler would warn at each call). */
static volatile size_t no_room_for_a_record = SIZE_MAX - 8;
static volatile size_t half_of_everything = SIZE_MAX / 2;
/* 4 EiB: beyond any x86-64 address space, so refused whatever the overcommit policy */
static volatile size_t more_than_the_machine = (size_t)1 << 62;

/* Tags are numbered when their object is registered, and this thread has its shard
 * (from the allocations before main): every call stays inline. */
static void test_malloc_counts_inline(void **state)
{
	(void)state;
	static void *p[N];
	if (inline_built()) {
		assert_int_not_equal(*allocinfo__inline_v1.go, 0);
		assert_int_equal(allocinfo__inline_v1.small_max, 1032);
	}
	unsigned long before = fallbacks_now(), want = 0;
	long long bytes = 0, odd_bytes = 0;
	for (int i = 0; i < N; i++) {
		size_t n = size_of_block(i);
		p[i] = m_block(n);
		assert_non_null(p[i]);
		memset(p[i], 0xa5, n);
		bytes += (long long)n;
		odd_bytes += i % 2 ? (long long)n : 0;
		want += expected_for(n);
	}
	if (inline_built())	/* those small enough for the library's own heap */
		assert_int_equal(want, 344);
	assert_int_equal(fallbacks_now() - before, want);
	assert_site(__FILE__, m_line, "m_block", bytes, N);
	assert_true(malloc_usable_size(p[N - 1]) >= size_of_block(N - 1));
	for (int i = 0; i < N; i += 2)
		free(p[i]);
	assert_site(__FILE__, m_line, "m_block", odd_bytes, N / 2);
	for (int i = 1; i < N; i += 2)
		free(p[i]);
	assert_site(__FILE__, m_line, "m_block", 0, 0);
}

/* calloc: zeroed blocks of the exact size; an overflowing product reaches the library,
 * which refuses it. */
static void test_calloc_counts_inline(void **state)
{
	(void)state;
	free(c_block(1, 1));
	unsigned long before = fallbacks_now(), want = 0;
	void *p[100];
	for (int i = 0; i < 100; i++) {
		p[i] = c_block((size_t)i + 1, 30);
		assert_non_null(p[i]);
		for (int k = 0; k < (i + 1) * 30; k++)
			assert_int_equal(((unsigned char *)p[i])[k], 0);
		want += expected_for((size_t)(i + 1) * 30);
	}
	assert_int_equal(fallbacks_now() - before, want);
	assert_site(__FILE__, c_line, "c_block", 30 * 100 * 101 / 2, 100);
	for (int i = 0; i < 100; i++)
		free(p[i]);

	before = fallbacks_now();
	errno = 0;
	assert_null(c_block(half_of_everything, 3));
	assert_int_equal(errno, ENOMEM);
	assert_int_equal(fallbacks_now() - before, 1);
	assert_site(__FILE__, c_line, "c_block", 0, 0);
}

static int dup_line;
static char *dup_block(const char *s)
{
	dup_line = __LINE__ + 1;
	return strdup(s);
}

static int ndup_line;
static char *ndup_block(const char *s, size_t max)
{
	ndup_line = __LINE__ + 1;
	return strndup(s, max);
}

/* strdup and strndup: a copy in a block of exactly the string's size, inline. */
static void test_strdup_counts_inline(void **state)
{
	(void)state;
	unsigned long before = fallbacks_now();
	char *a = dup_block("hello"), *b = ndup_block("hello, world", 5);
	char *c = ndup_block("hi", 10), *d = dup_block("");
	assert_int_equal(fallbacks_now() - before,
			 expected_for(6) + expected_for(6) + expected_for(3) + expected_for(1));
	assert_string_equal(a, "hello");
	assert_string_equal(b, "hello");
	assert_string_equal(c, "hi");
	assert_string_equal(d, "");
	assert_site(__FILE__, dup_line, "dup_block", 6 + 1, 2);
	assert_site(__FILE__, ndup_line, "ndup_block", 6 + 3, 2);
	free(a);
	free(b);
	free(c);
	free(d);
	assert_site(__FILE__, dup_line, "dup_block", 0, 0);
	assert_site(__FILE__, ndup_line, "ndup_block", 0, 0);
}

/* Sizes the inline code cannot add a record to go to the library; sizes glibc refuses
 * fail inline with ENOMEM (a sanitizer's allocator would stop the program instead);
 * neither is counted. */
static void test_failures_count_nothing(void **state)
{
	(void)state;
	free(m_block(1));
	unsigned long before = fallbacks_now();
	errno = 0;
	assert_null(m_block(no_room_for_a_record));
	assert_int_equal(errno, ENOMEM);
	assert_int_equal(fallbacks_now() - before, 1);

	if (inline_built()) {
		before = fallbacks_now();
		errno = 0;
		assert_null(m_block(more_than_the_machine));
		assert_int_equal(errno, ENOMEM);
		assert_int_equal(fallbacks_now() - before, 0);
	}
	assert_site(__FILE__, m_line, "m_block", 0, 0);
}

/* A scope overrides every tag: the library charges the scope. */
static void test_scope_goes_to_the_library(void **state)
{
	(void)state;
	free(m_block(1));
	unsigned long before = fallbacks_now();
	void *p[10];
	int scope_line;
	{
		scope_line = __LINE__ + 1;
		ALLOC_TAG_SCOPE();
		for (int i = 0; i < 10; i++)
			p[i] = m_block(8);
	}
	assert_int_equal(fallbacks_now() - before, 10);
	assert_site(__FILE__, scope_line, "test_scope_goes_to_the_library", 80, 10);
	assert_site(__FILE__, m_line, "m_block", 0, 0);
	for (int i = 0; i < 10; i++)
		free(p[i]);
	assert_site(__FILE__, scope_line, "test_scope_goes_to_the_library", 0, 0);
}

/* Counting switched off: plain blocks from glibc, made inline too; switched on again:
 * counted inline. Blocks of either kind are freed and grown under either. */
static void test_switch_off_and_on(void **state)
{
	(void)state;
	free(m_block(1));
	allocinfo_set_enabled(0);
	unsigned long before = fallbacks_now();
	void *off = m_block(100), *off_zeroed = c_block(10, 10);
	assert_non_null(off);
	assert_non_null(off_zeroed);
	assert_int_equal(fallbacks_now() - before, expected(2));
	for (int k = 0; k < 100; k++)
		assert_int_equal(((unsigned char *)off_zeroed)[k], 0);
	memset(off, 1, 100);
	assert_site(__FILE__, m_line, "m_block", 0, 0);
	assert_site(__FILE__, c_line, "c_block", 0, 0);
	free(off_zeroed);	/* a plain block, freed while off */

	allocinfo_set_enabled(1);
	before = fallbacks_now();
	void *on = m_block(200);
	assert_int_equal(fallbacks_now() - before, expected_for(200));
	assert_site(__FILE__, m_line, "m_block", 200, 1);
	int realloc_line = __LINE__ + 1;
	off = realloc(off, 300);	/* a plain block gets a record, charged here */
	assert_non_null(off);
	assert_int_equal(((unsigned char *)off)[99], 1);
	assert_site(__FILE__, realloc_line, "test_switch_off_and_on", 300, 1);
	allocinfo_set_enabled(0);
	free(on);		/* counted blocks, freed while off */
	free(off);
	allocinfo_set_enabled(1);
	assert_site(__FILE__, m_line, "m_block", 0, 0);
	assert_site(__FILE__, realloc_line, "test_switch_off_and_on", 0, 0);
}

/* A new thread has no shard until its first allocation, made by the library. */
static void *thread_allocs(void *arg)
{
	(void)arg;
	unsigned long before = fallbacks_now();
	void **p = malloc(10 * sizeof(void *));	/* this line's tag is numbered already */
	for (int i = 0; i < 10; i++)
		p[i] = m_block(16);
	unsigned long *used = malloc(sizeof(*used));
	*used = fallbacks_now() - before;	/* 12 calls: how many reached the library */
	for (int i = 0; i < 10; i++)
		free(p[i]);
	free(p);
	return used;
}

static void test_new_thread(void **state)
{
	(void)state;
	free(m_block(1));
	free(thread_allocs(NULL));	/* numbers that function's tags */
	pthread_t t;
	void *ret;
	assert_int_equal(pthread_create(&t, NULL, thread_allocs, NULL), 0);
	assert_int_equal(pthread_join(t, &ret), 0);
	/* the first allocation takes a shard; the other eleven stay inline, unless small
	 * enough for the library's own heap */
	unsigned long used = *(unsigned long *)ret;
	free(ret);
	assert_int_equal(used, 1 + 10 * expected_for(16) + expected_for(sizeof(unsigned long)));
	assert_site(__FILE__, m_line, "m_block", 0, 0);
}

/* This program again, with one more variable in its environment; its exit status. */
static int run_child(const char *env)
{
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		putenv((char *)env);
		execl("/proc/self/exe", "test_inline", "--child", (char *)NULL);
		_exit(99);
	}
	int status;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	return WEXITSTATUS(status);
}

/* Under ALLOCINFO_DEBUG every allocation goes through the library, which checks. */
static void test_debug_goes_to_the_library(void **state)
{
	(void)state;
	assert_int_equal(run_child("ALLOCINFO_DEBUG=1"), 0);
}

/* ALLOCINFO=never: plain blocks, inline. */
static void test_never(void **state)
{
	(void)state;
	assert_int_equal(run_child("ALLOCINFO=never"), 0);
}

/* ALLOCINFO_HEAP=glibc: no small-block heap, so small blocks are counted inline. */
static void test_glibc_heap(void **state)
{
	(void)state;
	assert_int_equal(run_child("ALLOCINFO_HEAP=glibc"), 0);
}

/* Exit status 0 when 100 allocations reached the library or not as the environment
 * says, and the counts are exact. */
static int child(void)
{
	int never = getenv("ALLOCINFO") && !strcmp(getenv("ALLOCINFO"), "never");
	int glibc_heap = getenv("ALLOCINFO_HEAP") && !strcmp(getenv("ALLOCINFO_HEAP"), "glibc");
	free(m_block(1));
	unsigned long before = fallbacks_now();
	void *p[100];
	for (int i = 0; i < 100; i++)
		p[i] = m_block(10);
	if (fallbacks_now() - before != (never || glibc_heap ? expected(100) : 100))
		return 1;
	if (allocinfo__inline_v1.small_max != 0 ||
	    (!glibc_heap && *allocinfo__inline_v1.go != 0))
		return 2;
	struct site_counts c = site_lookup(__FILE__, m_line, "m_block");
	if (never ? c.found : !c.found || c.bytes != 1000 || c.calls != 100)
		return 3;
	for (int i = 0; i < 100; i++)
		free(p[i]);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 2 && !strcmp(argv[1], "--child"))
		return child();
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_malloc_counts_inline),
		cmocka_unit_test(test_calloc_counts_inline),
		cmocka_unit_test(test_strdup_counts_inline),
		cmocka_unit_test(test_failures_count_nothing),
		cmocka_unit_test(test_scope_goes_to_the_library),
		cmocka_unit_test(test_switch_off_and_on),
		cmocka_unit_test(test_new_thread),
		cmocka_unit_test(test_debug_goes_to_the_library),
		cmocka_unit_test(test_never),
		cmocka_unit_test(test_glibc_heap),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
