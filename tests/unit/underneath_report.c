/* SPDX-License-Identifier: MIT */
/*
 * A program built with the header that reads its own report, twice, over an allocator
 * that tells operator new's blocks from malloc's (gperftools' debugging tcmalloc,
 * preloaded by underneath.sh, aborts on a block made by one and freed by the other).
 * The report is made by the library's reader module, a C++ library loaded on first
 * need, whose first blocks come from the allocator's operator new before its calls
 * are routed, and go back through the library's delete. With an argument, it first
 * loads that library (cxx_globals_plugin.cpp), whose global objects are made while it
 * loads, and unloads it at the end: each goes back to the allocator's own delete or
 * delete[]. Prints "ok" and exits 0, or names each failure and exits 1.
 */
#include <allocinfo.h>

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "site_report.h"

static int failures;

static void expect(int line, long long bytes, unsigned long long calls, const char *when)
{
	struct site_counts c = site_lookup(__FILE__, line, "main");
	if ((calls && !c.found) || c.bytes != bytes || c.calls != calls) {
		printf("%s: line %d holds %lld bytes in %llu calls, not %lld in %llu\n", when,
		       line, c.bytes, c.calls, bytes, calls);
		failures++;
	}
}

int main(int argc, char **argv)
{
	void *plugin = NULL;
	if (argc > 1) {
		plugin = dlopen(argv[1], RTLD_NOW);
		size_t (*size)(void) = plugin ? (size_t (*)(void))dlsym(plugin, "cxx_globals_size")
					      : NULL;
		if (!size || size() != 1300) {
			printf("%s: %s\n", argv[1], plugin ? "no cxx_globals_size() of 1300"
							   : dlerror());
			return 1;
		}
	}
	/* With ALLOCINFO=never nothing is counted. */
	const char *mode = getenv("ALLOCINFO");
	int k = !(mode && !strcmp(mode, "never"));
	int line = __LINE__ + 1;
	char *p = malloc(100);
	memset(p, 1, 100);
	expect(line, 100 * k, k, "made");
	free(p);
	expect(line, 0, 0, "freed");
	if (plugin && dlclose(plugin)) {
		printf("dlclose: %s\n", dlerror());
		failures++;
	}
	if (failures)
		return 1;
	puts("ok");
	return 0;
}
