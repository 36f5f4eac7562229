/* SPDX-License-Identifier: MIT */
/* The /proc and /sys facts the library records in every store. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

extern "C" {
#include <cmocka.h>
}

#include "procfs.h"

/* Field 22 of /proc/self/stat, parsed independently: the command may hold spaces
 * and parentheses, so split after the last ')'. */
static unsigned long long start_time_by_hand(void)
{
	char buf[2048];
	FILE *f = fopen("/proc/self/stat", "r");
	assert_non_null(f);
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	char *p = strrchr(buf, ')') + 2;	/* field 3 */
	unsigned long long v = 0;
	for (int field = 3; field <= 22; field++) {
		char *end = strchr(p, ' ');
		if (field == 22)
			v = strtoull(p, NULL, 10);
		p = end + 1;
	}
	return v;
}

static void test_start_time(void **state)
{
	(void)state;
	unsigned long long t = allocinfo::process_start_time(getpid());
	assert_true(t > 0);
	assert_int_equal(t, start_time_by_hand());
	assert_int_equal(allocinfo::process_start_time(0x7ffffff0), 0);	/* no such pid */
}

static void test_possible_cpus(void **state)
{
	(void)state;
	uint32_t n = allocinfo::possible_cpus();
	assert_true(n >= (uint32_t)sysconf(_SC_NPROCESSORS_ONLN));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_start_time),
		cmocka_unit_test(test_possible_cpus),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
