/* SPDX-License-Identifier: MIT */
/*
 * A "Vm...:" line of /proc/self/status in KiB, for the tests and benchmarks that
 * measure resident memory (-1 when it cannot be read).
 *
 * The first read of a process runs C library code that nothing ran before, some of
 * it after the kernel has written the figure; each first touch of a page of libc's
 * code maps the 64 KiB around it (the kernel's fault-around), so a second reading
 * can be higher with no allocation in between. A program whose library start-up
 * already ran that code (allocinfo's) does not see the jump; glibc alone does.
 * proc_status_kb() therefore throws its first read away.
 */
#ifndef ALLOCINFO_TESTS_PROC_STATUS_H
#define ALLOCINFO_TESTS_PROC_STATUS_H

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* read(2) into a buffer on the stack, not stdio: reading a figure allocates nothing,
 * so it cannot move the heap it measures. */
static long proc_status_read_kb(const char *field)
{
	char buf[8192];
	size_t len = 0, n = strlen(field);
	int fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t got;
	while (len < sizeof(buf) - 1 && (got = read(fd, buf + len, sizeof(buf) - 1 - len)) > 0)
		len += (size_t)got;
	close(fd);
	buf[len] = 0;
	for (char *line = buf; line && *line; line = strchr(line, '\n'), line = line ? line + 1 : 0)
		if (!strncmp(line, field, n))
			return atol(line + n);
	return -1;
}

static long proc_status_kb(const char *field)
{
	static int warm;
	if (!warm++)
		(void)proc_status_read_kb(field);
	return proc_status_read_kb(field);
}

#endif
