/* SPDX-License-Identifier: MIT */
/*
 * The unwind tables a walk out of a wrapper reads are given back once it is done
 * (table_pages.h): after an untagged call into the C library that allocates, the
 * page of libc's .eh_frame_hdr is no longer mapped, the call is counted exactly on
 * its caller's line, and what reads the tables later (backtrace()) finds them whole.
 */
#define _GNU_SOURCE
#include <allocinfo.h>

#include <execinfo.h>
#include <fcntl.h>
#include <link.h>
#include <setjmp.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <wchar.h>

#include <cmocka.h>

#include "site_report.h"

struct libc_tables {
	uintptr_t hdr;		/* its .eh_frame_hdr */
	bool read_only;		/* in a segment that is readable and nothing else */
};

/* The C library's .eh_frame_hdr, from its program headers. */
static int find_hdr(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	struct libc_tables *t = arg;
	if (!info->dlpi_name || !strstr(info->dlpi_name, "/libc.so"))
		return 0;
	for (int i = 0; i < info->dlpi_phnum; i++)
		if (info->dlpi_phdr[i].p_type == PT_GNU_EH_FRAME)
			t->hdr = info->dlpi_addr + info->dlpi_phdr[i].p_vaddr;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t start = info->dlpi_addr + ph->p_vaddr;
		if (ph->p_type == PT_LOAD && t->hdr >= start && t->hdr - start < ph->p_filesz)
			t->read_only = ph->p_flags == PF_R;
	}
	return 1;
}

/* Whether the page holding addr is mapped in (the present bit of /proc/self/pagemap,
 * which needs no privilege); -1 when it cannot tell. */
static int page_present(uintptr_t addr)
{
	int fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	uint64_t entry = 0;
	ssize_t n = pread(fd, &entry, sizeof(entry), (off_t)(addr / 4096 * sizeof(entry)));
	close(fd);
	return n == sizeof(entry) ? (int)(entry >> 63) : -1;
}

/* Refills of the small-block heap: where ranges that waited are given back. */
static void churn(void)
{
	static void *p[2000];
	for (int i = 0; i < 2000; i++)
		p[i] = malloc(48 + i % 7 * 16);
	for (int i = 0; i < 2000; i++)
		free(p[i]);
}

static void test_tables_read_by_a_walk_are_given_back(void **state)
{
	(void)state;
	const char *san = getenv("ALLOCINFO_SANITIZER");
	if (san && strcmp(san, "no"))
		skip();	/* a sanitizer's interceptors call its allocator, not ours */
	struct libc_tables t = { 0, false };
	dl_iterate_phdr(find_hdr, &t);
	assert_true(t.hdr != 0);
	if (!t.read_only)
		skip();	/* tables beside code: never given back */
	uintptr_t hdr = t.hdr;
	assert_int_equal(*(volatile const unsigned char *)hdr, 1);	/* its version */
	assert_int_equal(page_present(hdr), 1);

	/* Not tagged (a pointer, not the macro): the walk out of libc finds this line. */
	wchar_t *(*dup)(const wchar_t *) = wcsdup;
	int line = __LINE__ + 1;
	wchar_t *w = dup(L"tables");
	assert_non_null(w);

	/* Given back at once, or, when the last give back was too recent, by a refill
	 * soon after. (Before the report is read: rendering it reads them again.) */
	int present = 1;
	for (int i = 0; i < 200 && present; i++) {
		present = page_present(hdr);
		if (present) {
			churn();
			nanosleep(&(struct timespec){ 0, 5000000 }, NULL);
		}
	}
	assert_int_equal(present, 0);
	struct site_counts c = site_lookup(__FILE__, line, __func__);
	assert_int_equal(c.bytes, 7 * sizeof(wchar_t));
	assert_int_equal(c.calls, 1);

	/* Read again, the tables are whole. */
	assert_int_equal(*(volatile const unsigned char *)hdr, 1);
	void *frames[8];
	assert_true(backtrace(frames, 8) >= 2);
	free(w);
	c = site_lookup(__FILE__, line, __func__);
	assert_int_equal(c.bytes, 0);
	assert_int_equal(c.calls, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tables_read_by_a_walk_are_given_back),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
