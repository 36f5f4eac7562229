/* SPDX-License-Identifier: MIT */
/*
 * A "Vm...:" line of /proc/self/status in KiB, for the tests and benchmarks that
 * measure resident memory (-1 when it cannot be read).
 *
 * The first read of a process runs stdio and string code that nothing ran before,
 * some of it after the kernel has written the figure; each first touch of a page of
 * libc's code maps the 64 KiB around it (the kernel's fault-around), so a second
 * reading is up to 200 KiB higher with no allocation in between. A program whose
 * library start-up already ran that code (allocinfo's) does not see the jump; glibc
 * alone does. proc_status_kb() therefore throws its first read away.
 */
#ifndef ALLOCINFO_TESTS_PROC_STATUS_H
#define ALLOCINFO_TESTS_PROC_STATUS_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static long proc_status_read_kb(const char *field)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	long kb = -1;
	size_t n = strlen(field);
	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, field, n))
			kb = atol(line + n);
	if (f)
		fclose(f);
	return kb;
}

static long proc_status_kb(const char *field)
{
	static int warm;
	if (!warm++)
		(void)proc_status_read_kb(field);
	return proc_status_read_kb(field);
}

#endif
