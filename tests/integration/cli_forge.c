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
 * Every other KIND is the good store with one thing broken (see kinds[] below),
 * but for
 *
 *   cli_forge callers PATH PID N MODULE...
 *
 * a valid store of N caller tags, tag i at address BASE + 16 * i in the i-th
 * MODULE (cycling through them), each holding 1 byte in 1 allocation (N may be
 * given as N+BASE; BASE is 0x1000 otherwise); and
 *
 *   cli_forge site PATH PID MODULE FILE LINE FUNC BYTES CALLS
 *
 * a valid store of one static tag with these names and counts (negative ones too);
 * and
 *
 *   cli_forge big PATH PID NTAGS NSHARDS
 *
 * a sparse store of NTAGS static tags big.c:<slot> [big-PID] func:big, 1 byte in 1
 * allocation each (in shard 0), with NSHARDS shards all in use.
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

/* The store of "callers": the header of the good one, sized for n tags. */
static int forge_callers(const char *path, int pid, const char *count, char **modules, int nmod)
{
	char *end;
	uint32_t n = (uint32_t)strtoul(count, &end, 10);
	uint64_t base = *end == '+' ? strtoull(end + 1, NULL, 0) : 0x1000;
	const uint32_t cap = n + 2, cpus = 2;
	uint64_t strings_cap = 4096;
	for (int m = 0; m < nmod; m++)
		strings_cap += strlen(modules[m]) + 1;
	uint64_t tags_off = 256, strings_off = tags_off + (uint64_t)cap * 32;
	uint64_t counters_off = (strings_off + strings_cap + 63) & ~63ull;
	uint64_t stride = (uint64_t)cap * 16, total = counters_off + cpus * stride;
	unsigned char *buf = calloc(1, total);
	if (!buf)
		return 1;

	build_good(pid);	/* for its header and exe string */
	memcpy(buf, store, sizeof(struct allocinfo_store_header));
	struct allocinfo_store_header *h = (struct allocinfo_store_header *)buf;
	h->total_size = total;
	h->tag_capacity = cap;
	h->nr_tags = cap;
	h->tags_offset = tags_off;
	h->strings_offset = strings_off;
	h->strings_capacity = strings_cap;
	h->counters_offset = counters_off;
	h->cpu_stride = stride;
	h->nr_cpus = cpus;

	char *strings = (char *)buf + strings_off;
	uint64_t used = 1;
	const char *exe = (const char *)store + STRINGS_OFF + h->exe_off;
	if (h->exe_off) {
		memcpy(strings + used, exe, strlen(exe) + 1);
		h->exe_off = (uint32_t)used;
		used += strlen(exe) + 1;
	}
	uint32_t *mod_off = calloc((size_t)nmod, sizeof(*mod_off));
	for (int m = 0; m < nmod; m++) {
		mod_off[m] = (uint32_t)used;
		memcpy(strings + used, modules[m], strlen(modules[m]) + 1);
		used += strlen(modules[m]) + 1;
	}
	h->strings_used = used;
	for (uint32_t i = 0; i < n; i++) {
		struct allocinfo_store_tag *t =
			(struct allocinfo_store_tag *)(buf + tags_off + (i + 2) * 32ull);
		t->flags = ALLOCINFO_TAGF_USED | ALLOCINFO_TAGF_DYNAMIC;
		t->module_off = mod_off[i % (uint32_t)nmod];
		t->addr = base + 16ull * i;
		struct allocinfo_counter *c =
			(struct allocinfo_counter *)(buf + counters_off + (i + 2) * 16ull);
		c->bytes = 1;
		c->calls = 1;
	}
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	int rc = 0;
	if (fd < 0 || write(fd, buf, total) != (ssize_t)total || close(fd) != 0) {
		fprintf(stderr, "cli_forge: %s: %s\n", path, strerror(errno));
		rc = 1;
	}
	free(mod_off);
	free(buf);
	return rc;
}

/* The store of "big", written sparse: only what is not zero. */
static int forge_big(const char *path, int pid, uint32_t n, uint32_t shards)
{
	const uint32_t cap = n + 2;
	uint64_t tags_off = 4096, strings_off = tags_off + (uint64_t)cap * 32;
	uint64_t counters_off = (strings_off + 4096 + 4095) & ~4095ull;
	uint64_t stride = (uint64_t)cap * 16, total = counters_off + shards * stride;
	char module[64];

	build_good(pid);
	struct allocinfo_store_header h = *(struct allocinfo_store_header *)store;
	char strings[4096] = "";
	uint32_t used = 1;
	const char *exe = (const char *)store + STRINGS_OFF + h.exe_off;
	uint32_t exe_off = 0, file_off, func_off, module_off;
	if (h.exe_off) {
		exe_off = used;
		used += (uint32_t)snprintf(strings + used, sizeof(strings) - used, "%s", exe) + 1;
	}
	snprintf(module, sizeof(module), "/opt/big/big-%d", pid);
	file_off = used;
	used += (uint32_t)snprintf(strings + used, sizeof(strings) - used, "big.c") + 1;
	func_off = used;
	used += (uint32_t)snprintf(strings + used, sizeof(strings) - used, "big") + 1;
	module_off = used;
	used += (uint32_t)snprintf(strings + used, sizeof(strings) - used, "%s", module) + 1;
	h.exe_off = exe_off;
	h.total_size = total;
	h.tag_capacity = h.nr_tags = cap;
	h.tags_offset = tags_off;
	h.strings_offset = strings_off;
	h.strings_capacity = 4096;
	h.strings_used = used;
	h.counters_offset = counters_off;
	h.cpu_stride = stride;
	h.nr_cpus = h.shards_used = shards;

	struct allocinfo_store_tag *tags = calloc(cap, sizeof(*tags));
	struct allocinfo_counter *counters = calloc(cap, sizeof(*counters));
	for (uint32_t i = 2; i < cap; i++) {
		tags[i].flags = ALLOCINFO_TAGF_USED;
		tags[i].file_off = file_off;
		tags[i].func_off = func_off;
		tags[i].module_off = module_off;
		tags[i].line = i;
		counters[i].bytes = 1;
		counters[i].calls = 1;
	}
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0 || ftruncate(fd, (off_t)total) != 0 ||
	    pwrite(fd, &h, sizeof(h), 0) != (ssize_t)sizeof(h) ||
	    pwrite(fd, tags, cap * sizeof(*tags), (off_t)tags_off) != (ssize_t)(cap * sizeof(*tags)) ||
	    pwrite(fd, strings, used, (off_t)strings_off) != (ssize_t)used ||
	    pwrite(fd, counters, cap * sizeof(*counters), (off_t)counters_off) !=
		    (ssize_t)(cap * sizeof(*counters)) ||
	    close(fd) != 0) {
		fprintf(stderr, "cli_forge: %s: %s\n", path, strerror(errno));
		free(tags);
		free(counters);
		return 1;
	}
	free(tags);
	free(counters);
	return 0;
}

int main(int argc, char **argv)
{
	struct allocinfo_store_header *h = (struct allocinfo_store_header *)store;
	size_t size = TOTAL;

	if (argc == 6 && !strcmp(argv[1], "big"))
		return forge_big(argv[2], atoi(argv[3]), (uint32_t)atoi(argv[4]),
				 (uint32_t)atoi(argv[5]));
	if (argc >= 6 && !strcmp(argv[1], "callers"))
		return forge_callers(argv[2], atoi(argv[3]), argv[4], argv + 5, argc - 5);
	if (argc != 4 && !(argc == 10 && !strcmp(argv[1], "site"))) {
		fprintf(stderr, "usage: cli_forge KIND PATH PID\n");
		return 2;
	}
	const char *kind = argv[1];
	int pid = atoi(argv[3]);

	build_good(pid);
	if (!strcmp(kind, "site")) {
		struct allocinfo_store_tag *t = tag(2);
		t->module_off = intern(argv[4]);
		t->file_off = intern(argv[5]);
		t->line = (uint32_t)atoi(argv[6]);
		t->func_off = intern(argv[7]);
		memset(counter(0, 2), 0, sizeof(struct allocinfo_counter));
		memset(counter(1, 2), 0, sizeof(struct allocinfo_counter));
		memset(counter(1, 3), 0, sizeof(struct allocinfo_counter));
		counter(0, 2)->bytes = strtoll(argv[8], NULL, 10);
		counter(0, 2)->calls = strtoll(argv[9], NULL, 10);
		tag(3)->flags = 0;
		h->strings_used = strings_used;
	} else if (!strcmp(kind, "good"))
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
