/* SPDX-License-Identifier: MIT */
/*
 * Every tagged function of the header, called at a known line of a known function:
 * exactly the requested bytes and one call at that file:line, back to 0 0 after free.
 * Also: wrappers in the _noprof style, nested alloc_hooks(), ALLOC_TAG_SCOPE(),
 * realloc moving an allocation, and alignment.
 */
#include <allocinfo.h>

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <unistd.h>

#include <cmocka.h>

#include "plain.h"
#include "site_report.h"

#define HERE_NEXT (__LINE__ + 1)

static void t_malloc(void **state)
{
	int line = HERE_NEXT;
	void *p = malloc(100);
	assert_site(__FILE__, line, "t_malloc", 100, 1);
	free(p);
	assert_site(__FILE__, line, "t_malloc", 0, 0);
}

static void t_calloc(void **state)
{
	int line = HERE_NEXT;
	char *p = calloc(7, 9);
	for (int i = 0; i < 63; i++)
		assert_int_equal(p[i], 0);
	assert_site(__FILE__, line, "t_calloc", 63, 1);
	free(p);
	assert_site(__FILE__, line, "t_calloc", 0, 0);
}

static void test_realloc_moves(void **state)
{
	int l1 = HERE_NEXT;
	char *p = malloc(10);
	memcpy(p, "123456789", 10);
	int l2 = HERE_NEXT;
	p = realloc(p, 5000);
	assert_string_equal(p, "123456789");
	assert_site(__FILE__, l1, "test_realloc_moves", 0, 0);
	assert_site(__FILE__, l2, "test_realloc_moves", 5000, 1);
	int l3 = HERE_NEXT;
	p = realloc(p, 40);
	assert_site(__FILE__, l2, "test_realloc_moves", 0, 0);
	assert_site(__FILE__, l3, "test_realloc_moves", 40, 1);
	assert_string_equal(p, "123456789");
	int l4 = HERE_NEXT;
	void *q = realloc(NULL, 33);	/* realloc(NULL) is a malloc at its own line */
	assert_site(__FILE__, l4, "test_realloc_moves", 33, 1);
	free(q);
	free(p);
	assert_site(__FILE__, l3, "test_realloc_moves", 0, 0);
	assert_site(__FILE__, l4, "test_realloc_moves", 0, 0);
}

static void test_reallocarray(void **state)
{
	int line = HERE_NEXT;
	int *p = reallocarray(NULL, 12, sizeof(int));
	assert_site(__FILE__, line, "test_reallocarray", 48, 1);
	int l2 = HERE_NEXT;
	p = reallocarray(p, 20, sizeof(int));
	assert_site(__FILE__, line, "test_reallocarray", 0, 0);
	assert_site(__FILE__, l2, "test_reallocarray", 80, 1);
	errno = 0;
	assert_null(reallocarray(p, SIZE_MAX / 2, 4));	/* overflow: ENOMEM, p kept */
	assert_int_equal(errno, ENOMEM);
	assert_site(__FILE__, l2, "test_reallocarray", 80, 1);
	free(p);
	assert_site(__FILE__, l2, "test_reallocarray", 0, 0);
}

static void test_aligned_family(void **state)
{
	void *p;
	int l1 = HERE_NEXT;
	void *a = aligned_alloc(64, 640);
	int l2 = HERE_NEXT;
	int rc = posix_memalign(&p, 4096, 123);
	int l3 = HERE_NEXT;
	void *m = memalign(256, 77);
	int l4 = HERE_NEXT;
	void *v = valloc(10);
	int l5 = HERE_NEXT;
	void *pv = pvalloc(10);
	assert_int_equal(rc, 0);
	assert_int_equal((uintptr_t)a % 64, 0);
	assert_int_equal((uintptr_t)p % 4096, 0);
	assert_int_equal((uintptr_t)m % 256, 0);
	assert_int_equal((uintptr_t)v % getpagesize(), 0);
	assert_int_equal((uintptr_t)pv % getpagesize(), 0);
	assert_site(__FILE__, l1, "test_aligned_family", 640, 1);
	assert_site(__FILE__, l2, "test_aligned_family", 123, 1);
	assert_site(__FILE__, l3, "test_aligned_family", 77, 1);
	assert_site(__FILE__, l4, "test_aligned_family", 10, 1);
	assert_site(__FILE__, l5, "test_aligned_family", 10, 1);
	assert_true(malloc_usable_size(pv) >= (size_t)getpagesize());
	free(a);
	free(p);
	free(m);
	free(v);
	free(pv);
	assert_site(__FILE__, l1, "test_aligned_family", 0, 0);
	assert_site(__FILE__, l2, "test_aligned_family", 0, 0);
	assert_site(__FILE__, l3, "test_aligned_family", 0, 0);
	assert_site(__FILE__, l4, "test_aligned_family", 0, 0);
	assert_site(__FILE__, l5, "test_aligned_family", 0, 0);
	/* posix_memalign refuses a bad alignment without touching the output */
	p = (void *)0x1;
	int l6 = HERE_NEXT;
	assert_int_equal(posix_memalign(&p, 24, 10), EINVAL);
	assert_ptr_equal(p, (void *)0x1);
	assert_site(__FILE__, l6, "test_aligned_family", 0, 0);
}

static int vasprintf_line;

static int vasprintf_via(char **p, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vasprintf_line = HERE_NEXT;
	int r = vasprintf(p, fmt, ap);
	va_end(ap);
	return r;
}

static void test_strings(void **state)
{
	char *a, *b;
	int l1 = HERE_NEXT;
	char *s = strdup("hello");
	int l2 = HERE_NEXT;
	char *n = strndup("hello, world", 5);
	int l3 = HERE_NEXT;
	int len = asprintf(&a, "%d-%s", 12345, "x");
	int l4 = HERE_NEXT;
	int len2 = vasprintf_via(&b, "%s%s", "ab", "cd");
	assert_string_equal(s, "hello");
	assert_string_equal(n, "hello");
	assert_string_equal(a, "12345-x");
	assert_string_equal(b, "abcd");
	assert_int_equal(len, 7);
	assert_int_equal(len2, 4);
	/* charged to these lines, not to anything inside libc */
	assert_site(__FILE__, l1, "test_strings", 6, 1);
	assert_site(__FILE__, l2, "test_strings", 6, 1);
	assert_site(__FILE__, l3, "test_strings", 8, 1);
	assert_site(__FILE__, vasprintf_line, "vasprintf_via", 5, 1);
	(void)l4;
	free(s);
	free(n);
	free(a);
	free(b);
	assert_site(__FILE__, l1, "test_strings", 0, 0);
	assert_site(__FILE__, l2, "test_strings", 0, 0);
	assert_site(__FILE__, l3, "test_strings", 0, 0);
	assert_site(__FILE__, vasprintf_line, "vasprintf_via", 0, 0);
}

/* A wrapper declared the kernel way: its allocations are charged to its caller. */
static void *xmalloc_noprof(size_t n)
{
	void *p = malloc_noprof(n);
	if (!p)
		abort();
	return p;
}
#define xmalloc(...) alloc_hooks(xmalloc_noprof(__VA_ARGS__))

static char *xstrdup_noprof(const char *s)
{
	return strdup_noprof(s);
}
#define xstrdup(...) alloc_hooks(xstrdup_noprof(__VA_ARGS__))

static void *outer_noprof(size_t n)
{
	return xmalloc(n);	/* nested alloc_hooks(): the innermost (this line) wins */
}
#define outer(...) alloc_hooks(outer_noprof(__VA_ARGS__))
static const int outer_line = __LINE__ - 3;

static void test_noprof_wrappers(void **state)
{
	int l1 = HERE_NEXT;
	void *a = xmalloc(11);
	int l2 = HERE_NEXT;
	void *b = xmalloc(22);
	int l3 = HERE_NEXT;
	char *s = xstrdup("abc");
	int l4 = HERE_NEXT;
	void *c = outer(44);
	assert_site(__FILE__, l1, "test_noprof_wrappers", 11, 1);
	assert_site(__FILE__, l2, "test_noprof_wrappers", 22, 1);
	assert_site(__FILE__, l3, "test_noprof_wrappers", 4, 1);
	assert_site(__FILE__, outer_line, "outer_noprof", 44, 1);
	assert_site(__FILE__, l4, "test_noprof_wrappers", 0, 0);
	free(a);
	free(b);
	free(s);
	free(c);
	assert_site(__FILE__, l1, "test_noprof_wrappers", 0, 0);
	assert_site(__FILE__, outer_line, "outer_noprof", 0, 0);
}

static void test_scope(void **state)
{
	void *in_lib, *tagged, *via_hooks;
	int scope_line;
	int tagged_line;
	{
		scope_line = HERE_NEXT;
		ALLOC_TAG_SCOPE();
		in_lib = plain_alloc(300);	/* a library built without the header */
		tagged_line = HERE_NEXT;
		tagged = malloc(5);		/* the scope wins over the call's own tag */
		via_hooks = xmalloc(7);
	}
	void *after = plain_alloc(9);	/* out of the scope: the library's own line */
	assert_site(__FILE__, scope_line, "test_scope", 312, 3);
	assert_site(__FILE__, tagged_line, "test_scope", 0, 0);
	assert_site("plain.c", plain_alloc_line, "plain_alloc", 9, 1);
	free(in_lib);
	free(tagged);
	free(via_hooks);
	free(after);
	assert_site(__FILE__, scope_line, "test_scope", 0, 0);
}

static void test_alignment_and_usable_size(void **state)
{
	for (size_t n = 0; n < 5000; n += (n < 64 ? 1 : 97)) {
		unsigned char *p = malloc(n);
		assert_non_null(p);
		assert_int_equal((uintptr_t)p % 16, 0);
		size_t u = malloc_usable_size(p);
		assert_true(u >= n);
		memset(p, 0xa5, u);	/* the whole usable size is ours (ASan agrees) */
		free(p);
	}
	for (size_t a = 32; a <= 65536; a <<= 1) {
		void *p;
		unsigned char *q = aligned_alloc(a, 3 * a);
		unsigned char *m = memalign(a, 100);
		assert_int_equal(posix_memalign(&p, a, 1000), 0);
		assert_int_equal((uintptr_t)q % a, 0);
		assert_int_equal((uintptr_t)m % a, 0);
		assert_int_equal((uintptr_t)p % a, 0);
		memset(q, 1, malloc_usable_size(q));
		memset(m, 2, malloc_usable_size(m));
		memset(p, 3, malloc_usable_size(p));
		assert_true(malloc_usable_size(q) >= 3 * a);
		free(q);
		free(m);
		free(p);
	}
	assert_int_equal(malloc_usable_size(NULL), 0);
}

static void test_malloc_failure(void **state)
{
	int line = HERE_NEXT;
	void *p = malloc(SIZE_MAX - 8);
	assert_null(p);
	assert_int_equal(errno, ENOMEM);
	assert_site(__FILE__, line, "test_malloc_failure", 0, 0);
	errno = 0;
	assert_null(calloc(SIZE_MAX / 2, 3));
	assert_int_equal(errno, ENOMEM);
}

/* Memory crosses the boundary with a library built without the header. */
static void test_cross_library_free(void **state)
{
	int line = HERE_NEXT;
	void *mine = malloc(123);
	plain_free(mine);	/* freed by uninstrumented code: uncounted all the same */
	assert_site(__FILE__, line, "test_cross_library_free", 0, 0);

	void *theirs = plain_alloc(456);	/* a caller tag, named from debug info */
	assert_site("plain.c", plain_alloc_line, "plain_alloc", 456, 1);
	free(theirs);
	assert_null(site_lookup("plain.c", plain_alloc_line, "plain_alloc").found);
}

static void test_function_pointer(void **state)
{
	/* &malloc is the real function: the call is charged to its caller by address */
	void *(*fp)(size_t) = &malloc;
	void (*ff)(void *) = free;
	void *p = fp(64);
	assert_non_null(p);
	ff(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_malloc),
		cmocka_unit_test(t_calloc),
		cmocka_unit_test(test_realloc_moves),
		cmocka_unit_test(test_reallocarray),
		cmocka_unit_test(test_aligned_family),
		cmocka_unit_test(test_strings),
		cmocka_unit_test(test_noprof_wrappers),
		cmocka_unit_test(test_scope),
		cmocka_unit_test(test_alignment_and_usable_size),
		cmocka_unit_test(test_malloc_failure),
		cmocka_unit_test(test_cross_library_free),
		cmocka_unit_test(test_function_pointer),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
