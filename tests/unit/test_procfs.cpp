/* SPDX-License-Identifier: MIT */
/* The /proc and /sys facts the library records in every store. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/types.h>
#include <sys/wait.h>
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

static void test_proc_stat_fields(void **state)
{
	(void)state;
	allocinfo::proc_stat ps;
	assert_true(allocinfo::read_proc_stat(getpid(), ps));
	assert_int_equal(ps.state, 'R');
	assert_int_equal(ps.ppid, getppid());
	allocinfo::proc_stat none;
	assert_false(allocinfo::read_proc_stat(0, none));
	assert_false(allocinfo::read_proc_stat(-1, none));
	assert_false(allocinfo::read_proc_stat(0x7ffffff0, none));
}

/* Another process's name is its owner's to choose: one that looks like the fields
 * after it must not shift them. */
static void test_proc_stat_hostile_name(void **state)
{
	(void)state;
	int ready[2];
	assert_int_equal(pipe(ready), 0);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		prctl(PR_SET_NAME, ") Z 1 7 (99", 0, 0, 0);	/* 15 bytes: all kept */
		char c = 1;
		if (write(ready[1], &c, 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	char c;
	assert_int_equal(read(ready[0], &c, 1), 1);
	allocinfo::proc_stat ps;
	bool ok = allocinfo::read_proc_stat(pid, ps);
	char name[64] = "";
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
	FILE *f = fopen(path, "r");
	if (f) {
		if (!fgets(name, sizeof(name), f))
			name[0] = '\0';
		fclose(f);
	}
	kill(pid, SIGKILL);
	waitpid(pid, nullptr, 0);
	close(ready[0]);
	close(ready[1]);
	assert_string_equal(name, ") Z 1 7 (99\n");	/* the name took */
	assert_true(ok);
	assert_true(ps.state == 'R' || ps.state == 'S');	/* not the name's Z */
	assert_int_equal(ps.ppid, getpid());
	assert_true(ps.start_time >= allocinfo::process_start_time(getpid()));
}

static void test_cpu_list(void **state)
{
	(void)state;
	assert_int_equal(allocinfo::parse_cpu_list("0\n"), 1);
	assert_int_equal(allocinfo::parse_cpu_list("0-1\n"), 2);
	assert_int_equal(allocinfo::parse_cpu_list("0-3,8-11\n"), 12);
	assert_int_equal(allocinfo::parse_cpu_list("8-11,0-3"), 12);	/* highest, not last */
	assert_int_equal(allocinfo::parse_cpu_list("0-1048575"), 1048576);
	assert_int_equal(allocinfo::parse_cpu_list("0-1048576"), 0);	/* beyond the bound */
	assert_int_equal(allocinfo::parse_cpu_list("0-99999999999999999999999"), 0);
	assert_int_equal(allocinfo::parse_cpu_list(""), 0);
	assert_int_equal(allocinfo::parse_cpu_list("\n"), 0);
	assert_int_equal(allocinfo::parse_cpu_list("none"), 0);
}

static void test_decimal(void **state)
{
	(void)state;
	uint64_t v = 7;
	const char *s = "18446744073709551615 x";
	assert_ptr_equal(allocinfo::parse_decimal(s, &v), s + 20);
	assert_true(v == UINT64_MAX);
	s = "18446744073709551616";	/* one more: saturates */
	assert_ptr_equal(allocinfo::parse_decimal(s, &v), s + 20);
	assert_true(v == UINT64_MAX);
	s = "0042)";
	assert_ptr_equal(allocinfo::parse_decimal(s, &v), s + 4);
	assert_int_equal(v, 42);
	v = 7;
	assert_null(allocinfo::parse_decimal("-1", &v));
	assert_null(allocinfo::parse_decimal("", &v));
	assert_int_equal(v, 7);	/* untouched without digits */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_start_time),
		cmocka_unit_test(test_possible_cpus),
		cmocka_unit_test(test_proc_stat_fields),
		cmocka_unit_test(test_proc_stat_hostile_name),
		cmocka_unit_test(test_cpu_list),
		cmocka_unit_test(test_decimal),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
