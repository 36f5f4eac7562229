/* SPDX-License-Identifier: MIT */
/*
 * Blocks made without the library, freed through its free(): realpath()'s. In the
 * sanitizer builds its interceptor takes the block from the sanitizer's own malloc,
 * without the library's record; under ThreadSanitizer the first block of its size
 * (4,097 bytes) starts one of the allocator's regions, whose page below is not
 * mapped, and the library read the 16 bytes below it. libdw makes such a block for
 * every file it opens, and a report now closes its files when written: in the
 * ThreadSanitizer build allocinfo_print() crashed in dwarf_end().
 */
#include <allocinfo.h>

#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

static void t_realpath(void **state)
{
	(void)state;
	for (int i = 0; i < 64; i++) {
		char *a = realpath("/usr/../usr", NULL);
		char *b = realpath("/proc/self/..", NULL);
		assert_non_null(a);
		assert_non_null(b);
		assert_string_equal(a, "/usr");
		assert_string_equal(b, "/proc");
		free(a);
		free(b);
	}
}

/* The mappings of this program's file. */
static int own_mappings(void)
{
	char exe[PATH_MAX], line[PATH_MAX + 128];
	ssize_t len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	assert_true(len > 0);
	exe[len] = 0;
	FILE *f = fopen("/proc/self/maps", "r");
	int n = 0;
	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = 0;
		const char *path = strchr(line, '/');
		if (path && strcmp(path, exe) == 0)
			n++;
	}
	fclose(f);
	return n;
}

/* A report names the caller tags of this program (realpath()'s block is charged to
 * its caller) from its file, which libdw maps, and frees the blocks libdw made for it,
 * realpath()'s among them; the file and what was read go back once the report is
 * written. */
static void t_report(void **state)
{
	(void)state;
	char *held = realpath("/usr", NULL);	/* a live block libc makes */
	char name[] = "/tmp/allocinfo-foreign-XXXXXX";
	int fd = mkstemp(name);
	assert_true(fd >= 0);
	unlink(name);
	int before = own_mappings();
	for (int i = 0; i < 3; i++)
		assert_true(allocinfo_print(fd) > 0);
	assert_int_equal(own_mappings(), before);

	char report[65536];
	ssize_t n = pread(fd, report, sizeof(report) - 1, 0);
	assert_true(n > 0);
	report[n] = 0;
	assert_non_null(strstr(report, "func:t_report"));
	close(fd);
	free(held);
}

int main(void)
{
	/* First, before the test runner's output takes blocks of that size: the
	 * interceptor's is then the first of its size class. */
	char *first = realpath("/", NULL);
	if (!first || strcmp(first, "/") != 0)
		return 1;
	free(first);

	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_realpath),
		cmocka_unit_test(t_report),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
