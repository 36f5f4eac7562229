/* SPDX-License-Identifier: MIT */
/*
 * Caller tags are bounded: a program with more distinct callers than the bound (here
 * 20,000 generated call sites, each a few bytes of machine code) gets at most that many
 * caller tags, the rest share the overflow tag, and every allocation is still counted.
 * Before it, callers that hash to one probe window make the table grow rather than
 * share the overflow tag, and threads meet thousands of callers at once while the
 * caller table grows.
 */
#include <allocinfo.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

#include <cmocka.h>

#include "site_report.h"

#define STUBS 20000
#define STUB_SIZE 32
#define CALLER_LIMIT 16384

#if defined(__x86_64__)
/* n stubs of STUB_SIZE bytes, each calling malloc_noprof (charged to its caller: the
 * stub) and returning what it returns. */
static unsigned char *make_stubs(int n)
{
	unsigned char *code = mmap(NULL, (size_t)n * STUB_SIZE, PROT_READ | PROT_WRITE,
				   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(code != MAP_FAILED);
	void *(*target)(size_t) = malloc_noprof;
	for (int i = 0; i < n; i++) {
		unsigned char *s = code + (size_t)i * STUB_SIZE;
		/* sub $8,%rsp; movabs $target,%rax; call *%rax; add $8,%rsp; ret */
		static const unsigned char head[] = { 0x48, 0x83, 0xec, 0x08, 0x48, 0xb8 };
		static const unsigned char tail[] = { 0xff, 0xd0, 0x48, 0x83, 0xc4, 0x08, 0xc3 };
		memcpy(s, head, sizeof(head));
		memcpy(s + sizeof(head), &target, 8);
		memcpy(s + sizeof(head) + 8, tail, sizeof(tail));
	}
	assert_int_equal(mprotect(code, (size_t)n * STUB_SIZE, PROT_READ | PROT_EXEC), 0);
	return code;
}

static void *call_stub(unsigned char *code, int i, size_t n)
{
	return ((void *(*)(size_t))(void *)(code + (size_t)i * STUB_SIZE))(n);
}

/* Calls visit with each report line of code outside any object (module "??"), the
 * stubs' lines. */
static void for_each_stub_line(void (*visit)(long long bytes, unsigned long long calls,
					     void *arg),
			       void *arg)
{
	site_lookup("", 0, NULL);
	for (const char *l = site_report_text(); *l;) {
		const char *nl = strchr(l, '\n');
		long long bytes;
		unsigned long long calls;
		char loc[256], module[256];
		if (sscanf(l, "%lld %llu %255s [%255[^]]]", &bytes, &calls, loc, module) == 4 &&
		    strcmp(module, "??") == 0)
			visit(bytes, calls, arg);
		if (!nl)
			break;
		l = nl + 1;
	}
}

enum { SAME_HASH = 17, SAME_SIZE = 72, SAME_REGION = 64 << 20 };

/* A line of one of test_callers_hashing_together_grow_the_table()'s stubs. */
static void count_same_hash_line(long long bytes, unsigned long long calls, void *arg)
{
	if (bytes == SAME_SIZE && calls == 1)
		++*(int *)arg;
}

/* The caller table's hash of a return address (caller_tags.h), its low 16 bits. */
static uint32_t caller_hash(uintptr_t ra)
{
	return ((uint32_t)ra * 0x9e3779b1u) >> 16;
}

/* Callers that all hash to one place in every table up to 4,096 entries, and apart
 * in a table of 8,192: more of them than a probe window holds (16). Each must get its
 * own caller tag, the table growing for them, and none share the overflow tag. */
static void test_callers_hashing_together_grow_the_table(void **state)
{
	(void)state;
	unsigned char *code = mmap(NULL, SAME_REGION, PROT_READ | PROT_WRITE,
				   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	assert_true(code != MAP_FAILED);
	/* A stub's return address is 16 bytes into it (make_stubs()'s code). */
	size_t at[SAME_HASH];
	int found = 0, high = 0;
	uint32_t want = caller_hash((uintptr_t)code + 16) & 4095;
	for (size_t off = 0; off + STUB_SIZE <= SAME_REGION && found < SAME_HASH; off += STUB_SIZE) {
		uint32_t h = caller_hash((uintptr_t)code + off + 16);
		if ((h & 4095) != want)
			continue;
		int up = (h >> 12) & 1;	/* both halves of the 8,192 table, none overfull */
		if ((up && high == SAME_HASH / 2) || (!up && found - high == SAME_HASH - SAME_HASH / 2))
			continue;
		high += up;
		at[found++] = off;
	}
	assert_int_equal(found, SAME_HASH);
	unsigned char *one = make_stubs(1);	/* the stub's code, copied to each place */
	for (int i = 0; i < SAME_HASH; i++)
		memcpy(code + at[i], one, STUB_SIZE);
	assert_int_equal(mprotect(code, SAME_REGION, PROT_READ | PROT_EXEC), 0);

	void *blocks[SAME_HASH];
	for (int i = 0; i < SAME_HASH; i++)
		blocks[i] = ((void *(*)(size_t))(void *)(code + at[i]))(SAME_SIZE);

	int lines = 0;
	for_each_stub_line(count_same_hash_line, &lines);
	assert_int_equal(lines, SAME_HASH);
	for (int i = 0; i < SAME_HASH; i++)
		free(blocks[i]);
	/* Both mappings stay: the table still knows these callers. */
}

/* Threads that meet callers for the first time while the caller table doubles
 * (256 entries to 8,192): every stub gets exactly one caller tag, and every call is
 * counted on it. */
enum { GROW_STUBS = 4000, GROW_THREADS = 4, GROW_ROUNDS = 3 };
static unsigned char *grow_code;
static void *grow_blocks[GROW_THREADS][GROW_ROUNDS * GROW_STUBS];

static void *meet_callers(void *arg)
{
	int t = (int)(intptr_t)arg, n = 0;
	for (int r = 0; r < GROW_ROUNDS; r++)
		for (int k = 0; k < GROW_STUBS; k++)	/* each thread from its own start */
			grow_blocks[t][n++] = call_stub(grow_code, (k + t * 997) % GROW_STUBS, 40);
	return NULL;
}

struct grow_lines {
	long long lines, calls;
};

/* Each stub was called once by each thread in each round, with 40 bytes. */
static void check_grow_line(long long bytes, unsigned long long calls, void *arg)
{
	struct grow_lines *g = arg;
	g->lines++;
	g->calls += (long long)calls;
	assert_int_equal(calls, GROW_THREADS * GROW_ROUNDS);
	assert_int_equal(bytes, 40LL * GROW_THREADS * GROW_ROUNDS);
}

static void test_callers_met_by_threads_while_the_table_grows(void **state)
{
	(void)state;
	grow_code = make_stubs(GROW_STUBS);
	pthread_t th[GROW_THREADS];
	for (int t = 0; t < GROW_THREADS; t++)
		assert_int_equal(pthread_create(&th[t], NULL, meet_callers, (void *)(intptr_t)t), 0);
	for (int t = 0; t < GROW_THREADS; t++)
		assert_int_equal(pthread_join(th[t], NULL), 0);

	struct grow_lines g = { 0, 0 };
	for_each_stub_line(check_grow_line, &g);
	assert_int_equal(g.lines, GROW_STUBS);
	assert_int_equal(g.calls, (long long)GROW_STUBS * GROW_THREADS * GROW_ROUNDS);
	for (int t = 0; t < GROW_THREADS; t++)
		for (int i = 0; i < GROW_ROUNDS * GROW_STUBS; i++)
			free(grow_blocks[t][i]);
	/* The code stays mapped: the next test's stubs must not take these addresses,
	 * whose callers the table still knows. */
}
#endif

static void test_callers_are_bounded(void **state)
{
#if !defined(__x86_64__)
	skip();
#else
	unsigned char *code = make_stubs(STUBS);

	static void *blocks[STUBS];
	for (int i = 0; i < STUBS; i++) {
		blocks[i] = call_stub(code, i, 24);
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
#if defined(__x86_64__)
	/* The callers of the test before took GROW_STUBS tags, and a few more went to the
	 * test program's own callers (cmocka's, the C library's): a caller that lost its
	 * entry when the table grew would have taken a second tag, and left fewer. */
	print_message("%lld of %d calls shared the overflow tag\n", overflow_calls, STUBS);
	assert_true(overflow_calls <= STUBS - CALLER_LIMIT + GROW_STUBS + 64);
#endif
	assert_int_equal(calls_unknown + overflow_calls, STUBS);

	for (int i = 0; i < STUBS; i++)
		free(blocks[i]);
	munmap(code, (size_t)STUBS * STUB_SIZE);
#endif
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#if defined(__x86_64__)
		/* First, while the table is small. */
		cmocka_unit_test(test_callers_hashing_together_grow_the_table),
		/* Before the bound's test: these callers count toward it. */
		cmocka_unit_test(test_callers_met_by_threads_while_the_table_grows),
#endif
		cmocka_unit_test(test_callers_are_bounded),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
