/* SPDX-License-Identifier: MIT */
/*
 * The custom-allocator API: a pool that never calls malloc, written the kernel's way
 * (pool_alloc() = alloc_hooks(pool_alloc_noprof())), is counted per caller line with
 * " allocator:pool", exactly, nothing written into its blocks; uncharging brings the
 * lines back to 0; pointer identity names pool blocks; misuse gets its errno.
 */
#include <allocinfo.h>

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "site_report.h"

#define HERE_NEXT (__LINE__ + 1)

/* A bump allocator over a static arena: no malloc anywhere. */
static unsigned char arena[1 << 16] __attribute__((aligned(16)));
static size_t arena_used;
static struct allocinfo_allocator *pool_id;

static void *pool_alloc_noprof(size_t n)
{
	void *p = arena + arena_used;
	arena_used += (n + 15) & ~(size_t)15;
	memset(p, 0xa5, n);	/* every byte the caller's: nothing of ours inside */
	allocinfo_charge(pool_id, p, n);
	return p;
}
#define pool_alloc(...) alloc_hooks(pool_alloc_noprof(__VA_ARGS__))

static void pool_free(void *p)
{
	assert_int_equal(allocinfo_uncharge(pool_id, p), 0);
}

/* The row "BYTES CALLS file:LINE [test_allocator] func:FUNC allocator:pool ", exactly. */
static void assert_pool_row(int line, const char *func, long long bytes, unsigned long long calls)
{
	(void)site_lookup(__FILE__, line, func);	/* reads the report afresh */
	const char *report = site_report_text();
	char tail[160], row[32];
	snprintf(tail, sizeof(tail), "test_allocator.c:%d [test_allocator] func:%s allocator:pool \n",
		 line, func);
	snprintf(row, sizeof(row), "%12lld %8llu ", bytes, calls);
	for (const char *at = strstr(report, tail); at; at = strstr(at + 1, tail)) {
		const char *start = at;
		while (start > report && start[-1] != '\n')
			start--;
		if (strncmp(start, row, strlen(row)) == 0)
			return;
	}
	if (bytes == 0 && calls == 0 && !strstr(report, tail))
		fail_msg("no row for line %d:\n%s", line, report);
	fail_msg("expected '%s...%s' in:\n%s", row, tail, report);
}

static void t_pool(void **state)
{
	(void)state;
	pool_id = allocinfo_allocator_create("pool");
	assert_non_null(pool_id);
	assert_ptr_equal(allocinfo_allocator_create("pool"), pool_id);

	void *a[3];
	int l_three = HERE_NEXT;
	for (int i = 0; i < 3; i++) a[i] = pool_alloc(40);
	int l_one = HERE_NEXT;
	void *b = pool_alloc(1000);
	assert_pool_row(l_three, "t_pool", 120, 3);
	assert_pool_row(l_one, "t_pool", 1000, 1);

	struct allocinfo_ptr_info info;
	assert_int_equal(allocinfo_pointer_info((char *)b + 999, &info), 0);
	assert_ptr_equal(info.start, b);
	assert_int_equal(info.size, 1000);
	assert_int_equal(info.line, l_one);
	assert_string_equal(info.allocator, "pool");
	assert_int_not_equal(allocinfo_pointer_info((char *)b + 1000, &info), 0);

	pool_free(a[1]);
	assert_pool_row(l_three, "t_pool", 80, 2);
	pool_free(a[0]);
	pool_free(a[2]);
	pool_free(b);
	assert_pool_row(l_three, "t_pool", 0, 0);
	assert_pool_row(l_one, "t_pool", 0, 0);
	assert_int_not_equal(allocinfo_pointer_info(b, &info), 0);
}

static void t_misuse(void **state)
{
	(void)state;
	struct allocinfo_allocator *x = allocinfo_allocator_create("other");
	assert_non_null(x);
	errno = 0;
	assert_null(allocinfo_allocator_create("two words"));
	assert_int_equal(errno, EINVAL);
	assert_null(allocinfo_allocator_create(""));
	assert_int_equal(allocinfo_charge(NULL, arena, 1), -1);
	assert_int_equal(errno, EINVAL);
	assert_int_equal(allocinfo_charge(x, arena + 100, 8), 0);
	assert_int_equal(allocinfo_charge(x, arena + 100, 8), -1);
	assert_int_equal(errno, EEXIST);
	assert_int_equal(allocinfo_uncharge(pool_id, arena + 100), -1);	/* x's, not pool's */
	assert_int_equal(errno, ENOENT);
	assert_int_equal(allocinfo_uncharge(x, arena + 100), 0);
	assert_int_equal(allocinfo_uncharge(x, arena + 100), -1);
	assert_int_equal(errno, ENOENT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_pool),
		cmocka_unit_test(t_misuse),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
