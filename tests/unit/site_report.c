/* SPDX-License-Identifier: MIT */
/* Parses allocinfo_print() output. Static buffers only: the helper must not change the
 * counts it reads. */
#define ALLOCINFO_NO_CALL_MACROS 1
#include <allocinfo.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmocka.h>

#include "site_report.h"

static char report[4 << 20];

const char *site_report_text(void)
{
	return report;
}

static void read_report(void)
{
	int fd = memfd_create("allocinfo-report", MFD_CLOEXEC);
	report[0] = '\0';
	if (fd < 0)
		return;
	if (allocinfo_print(fd) >= 0 && lseek(fd, 0, SEEK_SET) == 0) {
		ssize_t n = read(fd, report, sizeof(report) - 1);
		report[n > 0 ? n : 0] = '\0';
	}
	close(fd);
}

static const char *base_name(const char *p)
{
	const char *s = strrchr(p, '/');
	return s ? s + 1 : p;
}

struct site_counts site_lookup(const char *file, int line, const char *func)
{
	struct site_counts r;
	memset(&r, 0, sizeof(r));
	read_report();
	const char *want = base_name(file);
	for (char *l = report; *l;) {
		char *end = strchr(l, '\n');
		if (end)
			*end = '\0';
		long long bytes;
		unsigned long long calls;
		char loc[1024], module[256], fn[1024];
		int consumed = 0;
		if (l[0] != '#' && sscanf(l, "%lld %llu %1023s [%255[^]]] func:%1023s%n", &bytes,
					  &calls, loc, module, fn, &consumed) == 5) {
			char *colon = strrchr(loc, ':');
			if (colon) {
				*colon = '\0';
				int ln = atoi(colon + 1);
				if (ln == line && strcmp(base_name(loc), want) == 0 &&
				    (!func || strcmp(fn, func) == 0)) {
					r.found = 1;
					r.bytes += bytes;
					r.calls += calls;
					r.unloaded = strstr(l + consumed, "unloaded:yes") != NULL;
					snprintf(r.module, sizeof(r.module), "%s", module);
				}
			}
		}
		if (!end)
			break;
		*end = '\n';
		l = end + 1;
	}
	return r;
}

void site_assert(const char *file, int line, const char *func, long long bytes,
		 unsigned long long calls, const char *at_file, int at_line)
{
	struct site_counts c = site_lookup(file, line, func);
	if (c.found && c.bytes == bytes && c.calls == calls)
		return;
	print_error("%s:%d: expected %s:%d func:%s = %lld bytes, %llu calls; got %s %lld %llu\n"
		    "report:\n%s\n", at_file, at_line, file, line, func ? func : "*", bytes, calls,
		    c.found ? "" : "(no line)", c.bytes, c.calls, report);
	_fail(at_file, at_line);
}
