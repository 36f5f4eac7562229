/* SPDX-License-Identifier: MIT */
/* Parsing of /proc and /sys files without allocating. */
#include "procfs.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

namespace allocinfo {

ssize_t read_small_file(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	size_t used = 0;
	while (used + 1 < size) {
		ssize_t n = read(fd, buf + used, size - 1 - used);
		if (n < 0) {
			close(fd);
			return -1;
		}
		if (n == 0)
			break;
		used += (size_t)n;
	}
	close(fd);
	buf[used] = '\0';
	return (ssize_t)used;
}

uint32_t possible_cpus()
{
	char buf[256];
	if (read_small_file("/sys/devices/system/cpu/possible", buf, sizeof(buf)) <= 0)
		return 0;
	/* A list of ranges such as "0-3,8-11": the answer is the highest id + 1. */
	unsigned long highest = 0;
	bool any = false;
	for (char *p = buf; *p;) {
		if (*p < '0' || *p > '9') {
			p++;
			continue;
		}
		char *end;
		unsigned long v = strtoul(p, &end, 10);
		if (v > highest || !any)
			highest = v;
		any = true;
		p = end;
	}
	return any && highest < 1u << 20 ? (uint32_t)highest + 1 : 0;
}

bool read_proc_stat(pid_t pid, proc_stat &out)
{
	char path[64], buf[1024];
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if (read_small_file(path, buf, sizeof(buf)) <= 0)
		return false;
	/* The command name (field 2) may hold spaces and parentheses: count fields
	 * from the last ')'. */
	char *p = strrchr(buf, ')');
	if (!p)
		return false;
	p++;
	for (int field = 3; field <= 22; field++) {
		while (*p == ' ')
			p++;
		if (!*p)
			return false;
		if (field == 3)
			out.state = *p;
		else if (field == 4)
			out.ppid = (int)strtol(p, nullptr, 10);
		else if (field == 22)
			out.start_time = strtoull(p, nullptr, 10);
		while (*p && *p != ' ')
			p++;
	}
	return true;
}

uint64_t process_start_time(pid_t pid)
{
	proc_stat ps;
	return read_proc_stat(pid, ps) ? ps.start_time : 0;
}

} /* namespace allocinfo */
