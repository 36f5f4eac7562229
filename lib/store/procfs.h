/* SPDX-License-Identifier: MIT */
/*
 * Small facts read from /proc and /sys with plain system calls (no allocation), usable
 * from inside malloc and by readers alike.
 */
#ifndef ALLOCINFO_PROCFS_H
#define ALLOCINFO_PROCFS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

namespace allocinfo {

/* Number of possible CPUs (highest id + 1), from /sys/devices/system/cpu/possible;
 * 0 when unknown. */
uint32_t possible_cpus();

/* The fields of /proc/<pid>/stat that allocinfo uses. */
struct proc_stat {
	char state = 0;		/* field 3: R, S, D, Z, ... */
	int ppid = 0;		/* field 4 */
	uint64_t start_time = 0;	/* field 22, clock ticks since boot */
};

/* Parses /proc/<pid>/stat; false when the process does not exist or cannot be read. */
bool read_proc_stat(pid_t pid, proc_stat &out);

/* Field 22 of /proc/<pid>/stat (start time in clock ticks since boot); 0 when the
 * process does not exist or cannot be read. */
uint64_t process_start_time(pid_t pid);

/* The unsigned decimal number at p (digits only, saturating at UINT64_MAX) in
 * *value; returns where it ends, or null when p holds no digit. */
const char *parse_decimal(const char *p, uint64_t *value);

/* A CPU list such as "0-3,8-11" (the kernel's format): the highest id + 1; 0 when
 * it names none, or more than 2^20 CPUs. */
uint32_t parse_cpu_list(const char *list);

/* Reads a whole small file into buf (NUL-terminated); returns its length or -1. */
ssize_t read_small_file(const char *path, char *buf, size_t size);

} /* namespace allocinfo */

#endif
