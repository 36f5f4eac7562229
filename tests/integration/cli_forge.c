/* SPDX-License-Identifier: MIT */
/*
 * Writes a synthetic store, good or hostile, for the allocinfo tests:
 *
 *   cli_forge KIND PATH PID
 *
 * "good" is a valid store for the live process PID (its start time and executable
 * read from /proc) with two tags:
 *   forged.c:7 [forged.so] func:forged          4096 bytes, 2 calls (over 2 CPUs)
 *   "evil\nname.c":1 [forged.so] "func x 1 y"    3 bytes, 1 call
 * Every other KIND is the good store with one thing broken (see kinds[] below).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "store_format.h"

enum { NR_CPUS = 2, TAG_CAP = 8, TAGS_OFF = 256, STRINGS_OFF = TAGS_OFF + TAG_CAP * 32,
       STRINGS_CAP = 512, COUNTERS_OFF = STRINGS_OFF + STRINGS_CAP,
       STRIDE = TAG_CAP * 16, TOTAL = COUNTERS_OFF + NR_CPUS * STRIDE };

static unsigned char store[TOTAL];
static uint32_t strings_used = 1;

static uint32_t intern(const char *s)
{
	size_t n = strlen(s) + 1;
	uint32_t off = strings_used;

	memcpy(store + STRINGS_OFF + off, s, n);
	strings_used += (uint32_t)n;
	return off;
}

static struct allocinfo_store_tag *tag(uint32_t slot)
{
	return (struct allocinfo_store_tag *)(store + TAGS_OFF + slot * 32);
}

static struct allocinfo_counter *counter(uint32_t cpu, uint32_t slot)
{
	return (struct allocinfo_counter *)(store + COUNTERS_OFF + cpu * STRIDE + slot * 16);
}

static unsigned long long start_time(int pid)
{
	char path[64], buf[1024];
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	char *p = strrchr(buf, ')');
	if (!p)
		return 0;
	p++;
	for (int field = 3; field < 22 && *p; field++) {
		while (*p == ' ')
			p++;
		while (*p && *p != ' ')
			p++;
	}
	return strtoull(p, NULL, 10);
}

static void build_good(int pid)
{
	struct allocinfo_store_header *h = (struct allocinfo_store_header *)store;
	char exe_link[64], exe[PATH_MAX];
	ssize_t n;

	memcpy(h->magic, ALLOCINFO_STORE_MAGIC, sizeof(h->magic));
	h->version = ALLOCINFO_STORE_VERSION;
	h->header_size = sizeof(*h);
	h->total_size = TOTAL;
	h->pid = pid;
	h->nr_cpus = NR_CPUS;
	h->start_time = start_time(pid);
	h->tag_capacity = TAG_CAP;
	h->tags_offset = TAGS_OFF;
	h->strings_offset = STRINGS_OFF;
	h->strings_capacity = STRINGS_CAP;
	h->counters_offset = COUNTERS_OFF;
	h->cpu_stride = STRIDE;
	h->enabled = 1;
	h->state = ALLOCINFO_STATE_LIVE;
	snprintf(exe_link, sizeof(exe_link), "/proc/%d/exe", pid);
	n = readlink(exe_link, exe, sizeof(exe) - 1);
	exe[n > 0 ? n : 0] = '\0';
	h->exe_off = n > 0 ? intern(exe) : 0;

	struct allocinfo_store_tag *t = tag(2);
	t->flags = ALLOCINFO_TAGF_USED;
	t->file_off = intern("forged.c");
	t->func_off = intern("forged");
	t->module_off = intern("/opt/forged/forged.so");
	t->line = 7;
	counter(0, 2)->bytes = 1000;
	counter(0, 2)->calls = 1;
	counter(1, 2)->bytes = 3096;
	counter(1, 2)->calls = 1;

	t = tag(3);
	t->flags = ALLOCINFO_TAGF_USED;
	t->file_off = intern("evil\nname.c");
	t->func_off = intern("func x 1 y");
	t->module_off = tag(2)->module_off;
	t->line = 1;
	counter(1, 3)->bytes = 3;
	counter(1, 3)->calls = 1;

	h->nr_tags = 4;
	h->strings_used = strings_used;
}

int main(int argc, char **argv)
{
	struct allocinfo_store_header *h = (struct allocinfo_store_header *)store;
	size_t size = TOTAL;

	if (argc != 4) {
		fprintf(stderr, "usage: cli_forge KIND PATH PID\n");
		return 2;
	}
	const char *kind = argv[1];
	int pid = atoi(argv[3]);

	build_good(pid);
	if (!strcmp(kind, "good"))
		;
	else if (!strcmp(kind, "truncated"))
		size = 100;			/* inside the header */
	else if (!strcmp(kind, "short"))
		size = COUNTERS_OFF + 8;	/* the counters are cut off */
	else if (!strcmp(kind, "badmagic"))
		memcpy(h->magic, "NOTSTOR", 8);
	else if (!strcmp(kind, "badversion"))
		h->version = 99;
	else if (!strcmp(kind, "hugetags"))
		h->nr_tags = 0xffffffffu;
	else if (!strcmp(kind, "hugecpus"))
		h->nr_cpus = 1u << 30;
	else if (!strcmp(kind, "regions"))
		h->counters_offset = 0xffffffffffff0000ull;
	else if (!strcmp(kind, "badstrings"))
		tag(2)->file_off = 0x7fffffff;
	else if (!strcmp(kind, "nonul"))
		h->strings_used = tag(3)->file_off + 2;	/* cuts "evil\nname.c" */
	else if (!strcmp(kind, "claims"))
		h->pid = pid == 1 ? 2 : 1;
	else if (!strcmp(kind, "reused"))
		h->start_time -= 1;
	else if (!strcmp(kind, "exited"))
		h->state = ALLOCINFO_STATE_EXITED;
	else if (!strcmp(kind, "badstate"))
		h->state = 77;
	else if (!strcmp(kind, "otherexe"))
		h->exe_off = intern("/nonexistent/other-program"), h->strings_used = strings_used;
	else {
		fprintf(stderr, "cli_forge: unknown kind '%s'\n", kind);
		return 2;
	}

	int fd = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0 || write(fd, store, size) != (ssize_t)size || close(fd) != 0) {
		fprintf(stderr, "cli_forge: %s: %s\n", argv[2], strerror(errno));
		return 1;
	}
	return 0;
}
