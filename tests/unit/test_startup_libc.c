/* SPDX-License-Identifier: MIT */
/*
 * The library's own start-up, and the first allocations of a program, call none of
 * glibc's printf or strto* functions: such a call maps the 64 KiB of libc's code
 * around it into a process that may never run it (performance.md, "No libc code
 * mapped for the library alone"). A child runs with libc_trap preloaded, which counts
 * the calls made to them from liballocinfo.
 */
#include <allocinfo.h>
#include <dlfcn.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "plain.h"
#include "site_report.h"
#include "spawn_self.h"

static int child(void)
{
	const long *calls = dlsym(RTLD_DEFAULT, "libc_trap_calls");
	const char *last = dlsym(RTLD_DEFAULT, "libc_trap_last");
	if (!calls || !last)
		return 90;	/* the trap is not loaded */
	/* A tagged site, a caller of its own (a new caller's object is described),
	 * and a block beyond the small-block heap. */
	int l = __LINE__ + 1;
	void *a = malloc(40);
	void *b = plain_alloc(56);
	void *c = malloc(5000);
	long n = *calls;
	struct site_counts s = site_lookup(__FILE__, l, "child");	/* the report formats */
	free(a);
	plain_free(b);
	free(c);
	if (s.bytes != 40 || s.calls != 1)
		return 91;
	if (n)
		fprintf(stderr, "liballocinfo called %s (%ld calls)\n", last, n);
	return n > 50 ? 50 : (int)n;
}

static const char *trap(void)
{
	const char *san = getenv("ALLOCINFO_SANITIZER");
	if (san && strcmp(san, "no"))
		skip();	/* a sanitizer's runtime must be the first object loaded */
	const char *t = getenv("LIBC_TRAP");
	assert_non_null(t);
	return t;
}

static void test_start_up_calls_none(void **state)
{
	(void)state;
	char preload[4096], err[4096];
	snprintf(preload, sizeof(preload), "LD_PRELOAD=%s", trap());
	const char *drop[] = { "LD_PRELOAD=", "ALLOCINFO", NULL };
	const char *add[] = { preload, NULL };
	int rc = spawn_self("child", drop, add, err, sizeof(err));
	if (rc)
		fprintf(stderr, "child: %s\n", err);
	assert_int_equal(rc, 0);
}

/* The trap sees the library's calls: a malformed setting's message is formatted. */
static void test_trap_sees_a_message(void **state)
{
	(void)state;
	char preload[4096], err[4096];
	snprintf(preload, sizeof(preload), "LD_PRELOAD=%s", trap());
	const char *drop[] = { "LD_PRELOAD=", "ALLOCINFO", NULL };
	const char *add[] = { preload, "ALLOCINFO_HEAP=bogus", NULL };
	int rc = spawn_self("child", drop, add, err, sizeof(err));
	assert_true(rc >= 1 && rc <= 50);
	assert_non_null(strstr(err, "ALLOCINFO_HEAP"));
	assert_non_null(strstr(err, "liballocinfo called"));
}

int main(int argc, char **argv)
{
	if (argc == 2 && strcmp(argv[1], "child") == 0)
		return child();
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_start_up_calls_none),
		cmocka_unit_test(test_trap_sees_a_message),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
