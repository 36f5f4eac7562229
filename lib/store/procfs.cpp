/* SPDX-License-Identifier: MIT */
/*
 * Parsing of /proc and /sys files without allocating. Every process runs these at
 * start-up, so they format and parse numbers by hand: glibc's printf and strto*
 * families are code a program may never run, and a call maps the 64 KiB of libc
 * around it into every process (performance.md, "No libc code mapped for the
 * library alone").
 */
#include "procfs.h"

#include <fcntl.h>
#include <limits.h>
#include <string.h>
#include <unistd.h>

#include "nocancel.h"

namespace allocinfo {

ssize_t read_small_file(const char *path, char *buf, size_t size)
{
	int fd = nocancel::open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	size_t used = 0;
	while (used + 1 < size) {
		ssize_t n = nocancel::read(fd, buf + used, size - 1 - used);
		if (n < 0) {
			nocancel::close(fd);
			return -1;
		}
		if (n == 0)
			break;
		used += (size_t)n;
	}
	nocancel::close(fd);
	buf[used] = '\0';
	return (ssize_t)used;
}

const char *parse_decimal(const char *p, uint64_t *value)
{
	uint64_t v = 0;
	const char *start = p;
	for (; *p >= '0' && *p <= '9'; p++) {
		unsigned d = (unsigned)(*p - '0');
		if (v > (UINT64_MAX - d) / 10)
			v = UINT64_MAX;	/* saturates, as strtoull does */
		else
			v = v * 10 + d;
	}
	if (p == start)
		return nullptr;
	*value = v;
	return p;
}

uint32_t parse_cpu_list(const char *list)
{
	/* Ranges such as "0-3,8-11": the answer is the highest id + 1. */
	uint64_t highest = 0;
	bool any = false;
	for (const char *p = list; *p;) {
		uint64_t v;
		const char *end = parse_decimal(p, &v);
		if (!end) {
			p++;
			continue;
		}
		if (v > highest || !any)
			highest = v;
		any = true;
		p = end;
	}
	return any && highest < 1u << 20 ? (uint32_t)highest + 1 : 0;
}

uint32_t possible_cpus()
{
	char buf[256];
	if (read_small_file("/sys/devices/system/cpu/possible", buf, sizeof(buf)) <= 0)
		return 0;
	return parse_cpu_list(buf);
}

bool read_proc_stat(pid_t pid, proc_stat &out)
{
	if (pid <= 0)
		return false;
	/* "/proc/<pid>/stat", the digits written from the end */
	char path[32], buf[1024];
	char *p = path + sizeof(path);
	static const char tail[] = "/stat";
	p -= sizeof(tail);
	memcpy(p, tail, sizeof(tail));
	for (unsigned v = (unsigned)pid; v; v /= 10)
		*--p = (char)('0' + v % 10);
	p -= 6;
	memcpy(p, "/proc/", 6);
	if (read_small_file(p, buf, sizeof(buf)) <= 0)
		return false;
	/* The command name (field 2) may hold spaces and parentheses: count fields
	 * from the last ')'. */
	p = strrchr(buf, ')');
	if (!p)
		return false;
	p++;
	for (int field = 3; field <= 22; field++) {
		while (*p == ' ')
			p++;
		if (!*p)
			return false;
		uint64_t v;
		if (field == 3)
			out.state = *p;
		else if (field == 4 && parse_decimal(p, &v))
			out.ppid = v <= INT_MAX ? (int)v : 0;
		else if (field == 22 && parse_decimal(p, &v))
			out.start_time = v;
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
