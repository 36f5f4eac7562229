/* SPDX-License-Identifier: MIT */
/*
 * Test helper: reads this process's report (allocinfo_print) and finds the line of one
 * call site, so tests can assert its exact bytes and calls.
 */
#ifndef ALLOCINFO_TEST_SITE_REPORT_H
#define ALLOCINFO_TEST_SITE_REPORT_H

#ifdef __cplusplus
extern "C" {
#endif

struct site_counts {
	int found;		/* the report has a line for the site */
	long long bytes;
	unsigned long long calls;
	int unloaded;		/* the line ends in unloaded:yes */
	char module[256];
};

/* The site's line in this process's report. `file` is compared by basename (static
 * tags carry the path as compiled, caller tags the one in debug info); func by exact
 * match, or any function when NULL. */
struct site_counts site_lookup(const char *file, int line, const char *func);

/* The whole report, in a static buffer (for messages). */
const char *site_report_text(void);

/* Asserts the site's bytes and calls (CMocka), printing the report on failure. */
#define assert_site(file, line, func, bytes, calls) \
	site_assert((file), (line), (func), (long long)(bytes), (unsigned long long)(calls), \
		    __FILE__, __LINE__)
void site_assert(const char *file, int line, const char *func, long long bytes,
		 unsigned long long calls, const char *at_file, int at_line);

#ifdef __cplusplus
}
#endif

#endif
