/* SPDX-License-Identifier: MIT */
/*
 * The run-time switch and the environment: ALLOCINFO=0 counts nothing until
 * allocinfo_set_enabled(1); ALLOCINFO=never refuses to switch on; malformed values
 * get one "allocinfo:" line and the default. Each case runs in a child started with
 * its own environment (the variables are read once, at the first allocation).
 */
#include <allocinfo.h>

#include <dlfcn.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "site_report.h"
#include "spawn_self.h"

#define HERE_NEXT (__LINE__ + 1)

/* ---- the children ------------------------------------------------------------- */

static int child_off(void)
{
	/* started with ALLOCINFO=0 */
	if (allocinfo_enabled())
		return 10;
	int l1 = HERE_NEXT;
	void *before = malloc(100);	/* made while off */
	struct site_counts c = site_lookup(__FILE__, l1, "child_off");
	if (!c.found || c.bytes != 0 || c.calls != 0)
		return 11;
	allocinfo_set_enabled(1);
	if (!allocinfo_enabled())
		return 12;
	int l2 = HERE_NEXT;
	void *after = malloc(200);
	c = site_lookup(__FILE__, l2, "child_off");
	if (c.bytes != 200 || c.calls != 1)
		return 13;
	free(before);	/* made while off, freed while on: no counter goes negative */
	c = site_lookup(__FILE__, l1, "child_off");
	if (c.bytes != 0 || c.calls != 0)
		return 14;
	allocinfo_set_enabled(0);
	free(after);	/* counted when made: uncounted when freed, even while off */
	c = site_lookup(__FILE__, l2, "child_off");
	if (c.bytes != 0 || c.calls != 0)
		return 15;
	return 0;
}

static int child_never(void)
{
	allocinfo_set_enabled(1);	/* refused, with a message */
	if (allocinfo_enabled())
		return 20;
	void *p = malloc(50);
	free(p);
	return 0;
}

static int child_plain(void)
{
	/* started with malformed values: the defaults apply (on) */
	if (!allocinfo_enabled())
		return 30;
	const char *san = getenv("ALLOCINFO_SANITIZER");
	if ((!san || !strcmp(san, "no")) && allocinfo__inline_v1.small_max != 1032)
		return 32;	/* the small-block heap, as by default */
	int l = HERE_NEXT;
	void *p = malloc(77);
	struct site_counts c = site_lookup(__FILE__, l, "child_plain");
	free(p);
	return c.bytes == 77 && c.calls == 1 ? 0 : 31;
}

static int child_debug(void)
{
	/* started with ALLOCINFO_DEBUG=1: bad frees are named, and nothing else changes */
	int l = HERE_NEXT;
	char *p = malloc(64);
	static char not_heap[64] __attribute__((aligned(16)));
	memset(p, 0, 64);
	fprintf(stderr, "%p %p\n", (void *)(p + 32), (void *)(not_heap + 16));
	free(p + 32);		/* inside a block */
	free(not_heap + 16);	/* never allocated */
	struct site_counts c = site_lookup(__FILE__, l, "child_debug");
	if (c.bytes != 64 || c.calls != 1)
		return 40;
	free(p);
	free(p);		/* twice */
	c = site_lookup(__FILE__, l, "child_debug");
	if (c.bytes != 0 || c.calls != 0)
		return 41;
	void *q = realloc(not_heap + 16, 10);	/* refused: NULL, EINVAL */
	if (q || errno != EINVAL)
		return 42;
	/* C++'s sized delete: a size other than the allocation's is named; a pointer
	 * never allocated is named once, by the delete itself */
	void *(*op_new)(size_t) = (void *(*)(size_t))dlsym(RTLD_DEFAULT, "_Znwm");
	void (*op_delete)(void *, size_t) =
		(void (*)(void *, size_t))dlsym(RTLD_DEFAULT, "_ZdlPvm");
	if (!op_new || !op_delete)
		return 43;
	void *o = op_new(40);
	fprintf(stderr, "%p\n", o);
	op_delete(o, 48);
	op_delete(op_new(40), 40);
	op_delete(not_heap + 16, 8);
	return 0;
}

/* ---- the parent ---------------------------------------------------------------- */

/* This program as `argv0 mode`, with none of the control variables but env_add. */
static int run_child(const char *mode, const char *const *env_add, char *err, size_t errlen)
{
	static const char *const drop[] = { "ALLOCINFO=", "ALLOCINFO_DEBUG=", "ALLOCINFO_STORE=",
					    "ALLOCINFO_HEAP=", NULL };
	return spawn_self(mode, drop, env_add, err, errlen);
}

static void test_off_until_switched_on(void **state)
{
	char err[4096];
	const char *env[] = { "ALLOCINFO=0", NULL };
	assert_int_equal(run_child("off", env, err, sizeof(err)), 0);
	assert_string_equal(err, "");
}

static void test_never_refuses(void **state)
{
	char err[4096];
	const char *env[] = { "ALLOCINFO=never", NULL };
	assert_int_equal(run_child("never", env, err, sizeof(err)), 0);
	assert_string_equal(err, "allocinfo: allocinfo_set_enabled(1) refused: profiling was "
				 "started with ALLOCINFO=never\n");
}

static void test_malformed_values(void **state)
{
	char err[4096];
	const char *env[] = { "ALLOCINFO=yes please", NULL };
	assert_int_equal(run_child("plain", env, err, sizeof(err)), 0);
	assert_string_equal(err, "allocinfo: ALLOCINFO='yes please' is not valid "
				 "(expected 1, 0 or never); using 1\n");

	const char *env2[] = { "ALLOCINFO_DEBUG=2", "ALLOCINFO_STORE=tmpfs", "ALLOCINFO_HEAP=slab",
			       NULL };
	assert_int_equal(run_child("plain", env2, err, sizeof(err)), 0);
	assert_string_equal(err,
		"allocinfo: ALLOCINFO_STORE='tmpfs' is not valid (expected auto, bpf, shm or none); "
		"using auto\n"
		"allocinfo: ALLOCINFO_DEBUG='2' is not valid (expected 0 or 1); using 0\n"
		"allocinfo: ALLOCINFO_HEAP='slab' is not valid (expected own or glibc); using own\n");

	const char *env3[] = { "ALLOCINFO=", NULL };
	assert_int_equal(run_child("plain", env3, err, sizeof(err)), 0);
	assert_string_equal(err, "allocinfo: ALLOCINFO='' is not valid (expected 1, 0 or never); "
				 "using 1\n");
}

static void test_debug_names_bad_pointers(void **state)
{
	char err[4096], expected[4096];
	const char *san = getenv("ALLOCINFO_SANITIZER");
	if (san && strcmp(san, "no"))
		skip();	/* the sanitizer reports bad frees itself, and stops */
	const char *env[] = { "ALLOCINFO_DEBUG=1", NULL };
	assert_int_equal(run_child("debug", env, err, sizeof(err)), 0);
	void *inside, *outside, *sized = NULL;
	assert_int_equal(sscanf(err, "%p %p", &inside, &outside), 2);
	const char *line = err;
	for (int i = 0; i < 5 && line; i++)	/* the sized delete's block, line 6 */
		line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL;
	assert_non_null(line);
	assert_int_equal(sscanf(line, "%p", &sized), 1);
	snprintf(expected, sizeof(expected),
		 "%p %p\n"
		 "allocinfo: free(%p): no allocinfo record: never allocated here, or already "
		 "freed; leaving it alone\n"
		 "allocinfo: free(%p): no allocinfo record: never allocated here, or already "
		 "freed; leaving it alone\n"
		 "allocinfo: free(%p): no allocinfo record: never allocated here, or already "
		 "freed; leaving it alone\n"
		 "allocinfo: realloc(%p): no allocinfo record: never allocated here, or already "
		 "freed; leaving it alone\n"
		 "%p\n"
		 "allocinfo: operator delete(%p, 48): the allocation was 40 bytes\n"
		 "allocinfo: free(%p): no allocinfo record: never allocated here, or already "
		 "freed; leaving it alone\n",
		 inside, outside, inside, outside, (char *)inside - 32, outside, sized, sized,
		 outside);
	assert_string_equal(err, expected);
}

int main(int argc, char **argv)
{
	if (argc == 2 && strcmp(argv[1], "off") == 0)
		return child_off();
	if (argc == 2 && strcmp(argv[1], "never") == 0)
		return child_never();
	if (argc == 2 && strcmp(argv[1], "plain") == 0)
		return child_plain();
	if (argc == 2 && strcmp(argv[1], "debug") == 0)
		return child_debug();
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_off_until_switched_on),
		cmocka_unit_test(test_never_refuses),
		cmocka_unit_test(test_malformed_values),
		cmocka_unit_test(test_debug_names_bad_pointers),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
