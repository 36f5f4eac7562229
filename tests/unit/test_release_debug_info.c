/* SPDX-License-Identifier: MIT */
/*
 * What a report or a heap-profile snapshot reads to name caller tags (the program's
 * file, mapped by libdw, and its line tables and indexes) is given back once it is
 * written, the answers kept; a snapshot taken soon after the previous one keeps it
 * for the next. Seen from /proc/self/maps: a file is mapped once more while libdw
 * has it open.
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

/* The mappings of files in this process: libdw maps each file it reads. */
static int file_mappings(void)
{
	char line[PATH_MAX + 128];
	FILE *f = fopen("/proc/self/maps", "r");
	int n = 0;
	assert_non_null(f);
	while (fgets(line, sizeof(line), f))
		if (strstr(line, " /") && !strstr(line, "/memfd:"))
			n++;
	fclose(f);
	return n;
}

/* A block at a call site of its own: a caller tag to name from this file. */
static __attribute__((noinline)) void *held_by_report(void)
{
	void *(*call_malloc)(size_t) = &malloc;	/* not the header's: a caller tag */
	return call_malloc(24);
}

/* A report names caller tags from their objects' files, which libdw maps; they go
 * back once the report is written. (In the sanitizer builds the program's own calls
 * reach the sanitizer, and only libcmocka's tags are named.) */
static void t_report(void **state)
{
	(void)state;
	char name[] = "/tmp/allocinfo-release-XXXXXX";
	int fd = mkstemp(name);
	assert_true(fd >= 0);
	unlink(name);
	assert_true(allocinfo_print(fd) > 0);	/* the reader module and its libraries */
	int before = file_mappings();
	void *held = held_by_report();		/* a name to read */
	for (int i = 0; i < 3; i++)
		assert_true(allocinfo_print(fd) > 0);
	assert_int_equal(file_mappings(), before);
	close(fd);
	free(held);
}

/* A block at a call site of its own: a caller tag to name from this file. */
static __attribute__((noinline)) void *held_elsewhere(void)
{
	void *(*call_malloc)(size_t) = &malloc;
	return call_malloc(40);
}

static int snapshot_files(const char *dir)
{
	char cmd[PATH_MAX + 64];
	snprintf(cmd, sizeof(cmd), "ls %s | grep -c '\\.pb\\.gz$'", dir);
	FILE *p = popen(cmd, "r");
	int n = -1;
	assert_non_null(p);
	assert_int_equal(fscanf(p, "%d", &n), 1);
	pclose(p);
	return n;
}

static char g_dir[] = "/tmp/allocinfo-release-XXXXXX";

/* After the profiler's exit snapshot, which its own exit handler, registered later,
 * writes first. */
static void remove_dir(void)
{
	char cmd[PATH_MAX + 16];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", g_dir);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", g_dir);
}

static void t_snapshots(void **state)
{
	(void)state;
	char base[PATH_MAX];
	assert_non_null(mkdtemp(g_dir));
	assert_int_equal(atexit(remove_dir), 0);
	snprintf(base, sizeof(base), "%s/heap", g_dir);
	void *(*call_malloc)(size_t) = &malloc;
	assert_int_equal(allocinfo_pprof_profiler_start(1, base, 0, 0, 0), 0);
	void *first = call_malloc(24);	/* sampled: the unwinder's library is loaded */
	int before = file_mappings();

	/* The first snapshot: given back. */
	assert_int_equal(allocinfo_profiler_snapshot(), 0);
	assert_int_equal(file_mappings(), before);
	/* The next, at once, with a new caller tag to name: kept for the one after. */
	void *second = held_elsewhere();
	assert_int_equal(allocinfo_profiler_snapshot(), 0);
	assert_true(file_mappings() > before);
	assert_int_equal(snapshot_files(g_dir), 2);

	free(first);
	free(second);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_report),
		cmocka_unit_test(t_snapshots),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
