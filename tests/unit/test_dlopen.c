/* SPDX-License-Identifier: MIT */
/*
 * Shared libraries loaded and unloaded at run time: a plugin's call sites appear with
 * its module name; after dlclose its live allocations keep their tags (unloaded:yes)
 * until freed, then the tags leave the report and their slots are reused; a reader
 * renders reports while other threads load, allocate, free and unload; a dlclose
 * inside another one (a library's destructor unloading the plugin) returns.
 */
#include <allocinfo.h>

#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "../../lib/store/store_format.h"
#include "dl_util.h"
#include "report_check.h"
#include "site_report.h"

/* The plugin binds to the library in this program; when the program links it
 * statically (sanitizer builds), keep the entry points the plugin uses. */
__attribute__((used)) static void *const plugin_needs[] = {
	(void *)allocinfo_malloc, (void *)allocinfo_strdup, (void *)allocinfo_register_tags,
};

static void test_plugin_sites(void **state)
{
	struct plugin pl;
	if (plugin_open(&pl) != 0)
		fail_msg("cannot load the plugin");
	void *a = pl.alloc(1000);
	void *b = pl.alloc(24);
	char *s = pl.dup("plugin");
	struct site_counts c = site_lookup("plugin.c", pl.malloc_line, "plugin_alloc");
	assert_true(c.found);
	assert_int_equal(c.bytes, 1024);
	assert_int_equal(c.calls, 2);
	assert_string_equal(c.module, "libplugin.so");
	assert_int_equal(c.unloaded, 0);
	assert_site("plugin.c", pl.strdup_line, "plugin_strdup", 7, 1);
	pl.release(a);
	free(b);	/* freed by the program: the same */
	free(s);
	assert_site("plugin.c", pl.malloc_line, "plugin_alloc", 0, 0);
	assert_int_equal(dlclose(pl.handle), 0);
	/* idle tags of an unloaded object are gone */
	assert_false(site_lookup("plugin.c", pl.malloc_line, "plugin_alloc").found);
}

static void test_dlclose_with_live_memory(void **state)
{
	struct plugin pl;
	if (plugin_open(&pl) != 0)
		fail_msg("cannot load the plugin");
	void *keep[3];
	for (int i = 0; i < 3; i++)
		keep[i] = pl.alloc(100 + i);
	char *s = pl.dup("abc");
	int mline = pl.malloc_line, sline = pl.strdup_line;
	assert_int_equal(dlclose(pl.handle), 0);

	struct site_counts c = site_lookup("plugin.c", mline, "plugin_alloc");
	assert_true(c.found);
	assert_int_equal(c.bytes, 303);
	assert_int_equal(c.calls, 3);
	assert_true(c.unloaded);
	c = site_lookup("plugin.c", sline, "plugin_strdup");
	assert_true(c.found && c.unloaded && c.bytes == 4 && c.calls == 1);

	free(keep[0]);
	c = site_lookup("plugin.c", mline, "plugin_alloc");
	assert_true(c.unloaded && c.bytes == 203 && c.calls == 2);	/* 101 + 102 */
	free(keep[1]);
	free(keep[2]);
	free(s);
	/* back to zero: the tags leave the report */
	assert_false(site_lookup("plugin.c", mline, "plugin_alloc").found);
	assert_false(site_lookup("plugin.c", sline, "plugin_strdup").found);

	/* loading it again counts afresh */
	if (plugin_open(&pl) != 0)
		fail_msg("cannot load the plugin again");
	void *again = pl.alloc(55);
	c = site_lookup("plugin.c", pl.malloc_line, "plugin_alloc");
	assert_true(c.found && !c.unloaded && c.bytes == 55 && c.calls == 1);
	pl.release(again);
	dlclose(pl.handle);
}

/* The number of tag slots the store has handed out (its high-water mark). */
static uint32_t store_nr_tags(void)
{
	char path[512];
	const char *dir = getenv("ALLOCINFO_STORE_DIR");
	snprintf(path, sizeof(path), "%s/allocinfo-%d", dir ? dir : "/dev/shm", (int)getpid());
	int fd = open(path, O_RDONLY);
	if (fd < 0)
		return 0;
	struct allocinfo_store_header h;
	ssize_t n = pread(fd, &h, sizeof(h), 0);
	close(fd);
	return n == (ssize_t)sizeof(h) ? h.nr_tags : 0;
}

static void test_slots_are_reused(void **state)
{
	const char *dir = getenv("ALLOCINFO_STORE_DIR");
	if (!dir || getenv("ALLOCINFO_STORE"))
		skip();
	struct plugin pl;
	/* warm up: the first cycles may add caller tags of the loader itself */
	for (int i = 0; i < 5; i++) {
		if (plugin_open(&pl) != 0)
			fail_msg("cannot load the plugin");
		pl.release(pl.alloc(8));
		dlclose(pl.handle);
	}
	uint32_t before = store_nr_tags();
	assert_true(before > 0);
	for (int i = 0; i < 200; i++) {
		if (plugin_open(&pl) != 0)
			fail_msg("cannot load the plugin");
		void *p = pl.alloc(16);
		dlclose(pl.handle);
		free(p);	/* after the unload: reclaimed at the next report or unload */
	}
	allocinfo_print(-1);	/* reclaims what came back to zero */
	uint32_t after = store_nr_tags();
	assert_true(after <= before + 4);
}

/* ---- a reader against loaders ----------------------------------------------------- */

static int stop;	/* atomic */

static void *loader(void *arg)
{
	(void)arg;
	while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
		struct plugin pl;
		if (plugin_open(&pl) != 0)
			return (void *)1;
		void *p[4];
		for (int i = 0; i < 4; i++)
			p[i] = pl.alloc(32 * (i + 1));
		char *s = pl.dup("x");
		pl.release(p[0]);
		free(p[1]);
		dlclose(pl.handle);
		free(p[2]);	/* freed after the unload */
		free(p[3]);
		free(s);
	}
	return NULL;
}

static void test_reader_against_loaders(void **state)
{
	pthread_t t[4];
	__atomic_store_n(&stop, 0, __ATOMIC_RELAXED);
	for (int i = 0; i < 4; i++)
		assert_int_equal(pthread_create(&t[i], NULL, loader, NULL), 0);
	int fd = memfd_create("reports", MFD_CLOEXEC);
	assert_true(fd >= 0);
	static char buf[1 << 20];
	struct timespec start, now;
	clock_gettime(CLOCK_MONOTONIC, &start);
	int reports = 0;
	double seconds = getenv("ALLOCINFO_TORTURE") ? 60.0 : 3.0;
	do {
		assert_int_equal(ftruncate(fd, 0), 0);
		assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
		assert_true(allocinfo_print(fd) > 0);
		ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);
		assert_true(n > 0);
		buf[n] = '\0';
		const char *why = report_check(buf);
		if (why)
			fail_msg("malformed report (%s):\n%s", why, buf);
		reports++;
		clock_gettime(CLOCK_MONOTONIC, &now);
	} while (now.tv_sec - start.tv_sec + (now.tv_nsec - start.tv_nsec) / 1e9 < seconds);
	__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
	for (int i = 0; i < 4; i++) {
		void *r;
		pthread_join(t[i], &r);
		assert_null(r);
	}
	close(fd);
	assert_true(reports > 10);
	/* everything was freed: no plugin tag holds memory */
	struct site_counts c = site_lookup("plugin.c", 0, NULL);
	(void)c;
	for (const char *l = site_report_text(); *l;) {
		const char *nl = strchr(l, '\n');
		int len = (int)(nl ? nl - l : (long)strlen(l));
		const char *hit = strstr(l, "plugin.c:");
		if (hit && hit < l + len && strncmp(l, "           0        0 ", 22) != 0)
			fail_msg("plugin memory left: %.*s", len, l);
		if (!nl)
			break;
		l = nl + 1;
	}
}

/* The library holds a lock of its own across dlclose (table_pages.h); a destructor
 * that calls dlclose must not wait for it. */
static void test_dlclose_inside_dlclose(void **state)
{
	(void)state;
	const char *nested = getenv("NESTED"), *plugin = getenv("PLUGIN");
	if (!nested || !plugin)
		skip();
	alarm(20);	/* a deadlock fails the test rather than hanging it */
	void *h = dlopen(nested, RTLD_NOW | RTLD_LOCAL);
	assert_non_null(h);
	int (*loaded)(void) = (int (*)(void))dlsym(h, "nested_loaded");
	assert_non_null(loaded);
	assert_true(loaded());
	assert_int_equal(dlclose(h), 0);
	alarm(0);
	assert_null(dlopen(plugin, RTLD_NOW | RTLD_NOLOAD));	/* unloaded as well */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_plugin_sites),
		cmocka_unit_test(test_dlclose_with_live_memory),
		cmocka_unit_test(test_slots_are_reused),
		cmocka_unit_test(test_reader_against_loaders),
		cmocka_unit_test(test_dlclose_inside_dlclose),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
