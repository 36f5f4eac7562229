/* SPDX-License-Identifier: MIT */
/*
 * Caller tags are bounded: a program with more distinct callers than the bound (here
 * 20,000 generated call sites, each a few bytes of machine code) gets at most that many
 * caller tags, the rest share the overflow tag, and every allocation is still counted.
 */
#include <allocinfo.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/mman.h>

#include <cmocka.h>

#include "site_report.h"

#define STUBS 20000
#define STUB_SIZE 32
#define CALLER_LIMIT 16384

static void test_callers_are_bounded(void **state)
{
#if !defined(__x86_64__)
	skip();
#else
	unsigned char *code = mmap(NULL, (size_t)STUBS * STUB_SIZE, PROT_READ | PROT_WRITE,
				   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(code != MAP_FAILED);
	void *(*target)(size_t) = malloc_noprof;	/* charged to its caller: the stub */
	for (int i = 0; i < STUBS; i++) {
		unsigned char *s = code + (size_t)i * STUB_SIZE;
		/* sub $8,%rsp; movabs $target,%rax; call *%rax; add $8,%rsp; ret */
		static const unsigned char head[] = { 0x48, 0x83, 0xec, 0x08, 0x48, 0xb8 };
		static const unsigned char tail[] = { 0xff, 0xd0, 0x48, 0x83, 0xc4, 0x08, 0xc3 };
		memcpy(s, head, sizeof(head));
		memcpy(s + sizeof(head), &target, 8);
		memcpy(s + sizeof(head) + 8, tail, sizeof(tail));
	}
	assert_int_equal(mprotect(code, (size_t)STUBS * STUB_SIZE, PROT_READ | PROT_EXEC), 0);

	static void *blocks[STUBS];
	for (int i = 0; i < STUBS; i++) {
		void *(*stub)(size_t) = (void *(*)(size_t))(void *)(code + (size_t)i * STUB_SIZE);
		blocks[i] = stub(24);
		assert_non_null(blocks[i]);
	}

	/* Lines of code outside any object: module "??", one per stub up to the bound. */
	site_lookup("", 0, NULL);
	long long calls_unknown = 0, lines_unknown = 0, overflow_calls = -1;
	for (const char *l = site_report_text(); *l;) {
		const char *nl = strchr(l, '\n');
		long long bytes;
		unsigned long long calls;
		char loc[256], module[256], fn[256];
		if (sscanf(l, "%lld %llu %255s [%255[^]]] func:%255s", &bytes, &calls, loc, module,
			   fn) == 5) {
			if (strcmp(module, "??") == 0) {
				calls_unknown += (long long)calls;
				lines_unknown++;
				assert_int_equal(bytes, 24 * (long long)calls);
			}
			if (strcmp(fn, "other_call_sites") == 0)
				overflow_calls = (long long)calls;
		}
		if (!nl)
			break;
		l = nl + 1;
	}
	assert_true(lines_unknown <= CALLER_LIMIT);
	assert_true(overflow_calls >= STUBS - CALLER_LIMIT);
	assert_int_equal(calls_unknown + overflow_calls, STUBS);

	for (int i = 0; i < STUBS; i++)
		free(blocks[i]);
	munmap(code, (size_t)STUBS * STUB_SIZE);
#endif
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_callers_are_bounded),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
