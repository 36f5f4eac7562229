/* SPDX-License-Identifier: MIT */
/*
 * allocinfo_pointer_info(): the start, interior and last byte of live blocks of every
 * size (small-block heap, glibc, glibc's mapped chunks) and alignment name the block
 * and its call site exactly; one past the end, freed blocks, the stack, static data
 * and wild addresses are "not ours" (ENOENT) without a fault; threads allocating and
 * freeing meanwhile do not disturb the answers for their own blocks.
 */
#include <allocinfo.h>

#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#define HERE_NEXT (__LINE__ + 1)

/* A sanitizer's allocator keeps freed blocks whole (quarantine) and its chunks are
 * not glibc's: a freed block's record is found intact there. */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define assert_freed(p) ((void)(p))
#else
#define assert_freed(p) assert_not_ours(p)
#endif

static char static_data[256];

/* p's block is [start, start + size), from file:line in func. */
static void assert_block(const void *p, const void *start, size_t size, int line,
			 const char *func)
{
	struct allocinfo_ptr_info info;
	int r = allocinfo_pointer_info(p, &info);
	if (r != 0)
		fail_msg("%p (block %p, %zu bytes): not found (errno %d)", p, start, size, errno);
	assert_ptr_equal(info.start, start);
	assert_int_equal(info.size, size);
	assert_int_equal(info.line, line);
	const char *base = strrchr(info.file, '/');
	assert_string_equal(base ? base + 1 : info.file, "test_pointer_info.c");
	assert_string_equal(info.func, func);
	assert_string_equal(info.module, "test_pointer_info");
	assert_string_equal(info.allocator, "malloc");
	assert_string_equal(info.via, "");
}

static void assert_not_ours(const void *p)
{
	struct allocinfo_ptr_info info;
	errno = 0;
	if (allocinfo_pointer_info(p, &info) == 0)
		fail_msg("%p: found as a block at %p of %zu bytes", p, info.start, info.size);
	assert_int_equal(errno, ENOENT);
}

static void assert_whole_block(const char *p, size_t n, int line, const char *func)
{
	assert_block(p, p, n, line, func);
	if (n > 1) {
		assert_block(p + n / 2, p, n, line, func);
		assert_block(p + n - 1, p, n, line, func);
	}
	if (n)
		assert_not_ours(p + n);	/* one past the end */
}

static void t_sizes(void **state)
{
	(void)state;
	static const size_t sizes[] = { 0, 1, 8, 24, 100, 1000, 1032, 1033, 4096, 100000,
					200000, 5u << 20 };
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		int line = HERE_NEXT;
		char *p = malloc(sizes[i]);
		assert_non_null(p);
		assert_whole_block(p, sizes[i], line, "t_sizes");
		free(p);
		assert_freed(p);
	}
}

static void t_alignments(void **state)
{
	(void)state;
	static const size_t aligns[] = { 32, 64, 256, 4096, 65536 };
	for (size_t i = 0; i < sizeof(aligns) / sizeof(aligns[0]); i++) {
		int line = HERE_NEXT;
		char *p = aligned_alloc(aligns[i], 3 * aligns[i]);
		assert_non_null(p);
		assert_int_equal((uintptr_t)p % aligns[i], 0);
		assert_whole_block(p, 3 * aligns[i], line, "t_alignments");
		void *q;
		line = HERE_NEXT;
		assert_int_equal(posix_memalign(&q, aligns[i], 100), 0);
		assert_whole_block(q, 100, line, "t_alignments");
		free(p);
		free(q);
		assert_freed(p);
	}
}

static void t_others(void **state)
{
	(void)state;
	int line = HERE_NEXT;
	char *c = calloc(10, 30);
	assert_whole_block(c, 300, line, "t_others");
	line = HERE_NEXT;
	c = realloc(c, 3000);
	assert_whole_block(c, 3000, line, "t_others");
	line = HERE_NEXT;
	char *s = strdup("seventeen bytes!");
	assert_whole_block(s, 17, line, "t_others");
	free(c);
	free(s);
}

static void t_not_blocks(void **state)
{
	(void)state;
	char stack[64];
	struct allocinfo_ptr_info info;
	memset(stack, 0, sizeof(stack));
	assert_not_ours(stack);
	assert_not_ours(stack + 32);
	assert_not_ours(static_data);
	assert_not_ours((const void *)t_not_blocks);
	assert_not_ours(NULL);
	assert_not_ours((const void *)1);
	assert_not_ours((const void *)(uintptr_t)0x7ffffffff000ull);
	assert_not_ours((const void *)UINTPTR_MAX);
	errno = 0;
	assert_int_equal(allocinfo_pointer_info(stack, NULL), -1);
	assert_int_equal(errno, EINVAL);
	(void)info;
}

enum { THREADS = 4, BLOCKS = 300 };

/* Each thread checks its own blocks while the others allocate and free; failures are
 * counted (cmocka's asserts belong to the main thread). */
static int block_is(const char *p, const char *start, size_t size, int line)
{
	struct allocinfo_ptr_info info;
	return allocinfo_pointer_info(p, &info) == 0 && info.start == start &&
	       info.size == size && (int)info.line == line && strcmp(info.func, "churn") == 0;
}

static void *churn(void *arg)
{
	unsigned seed = (unsigned)(uintptr_t)arg;
	char *keep[BLOCKS];
	size_t size[BLOCKS];
	uintptr_t failures = 0;
	int line = 0;
	for (int i = 0; i < BLOCKS; i++) {
		seed = seed * 1103515245u + 12345u;
		size[i] = 1 + (seed >> 8) % 3000;
		line = HERE_NEXT;
		keep[i] = malloc(size[i]);
	}
	for (int round = 0; round < 3; round++)
		for (int i = 0; i < BLOCKS; i++) {
			failures += !block_is(keep[i] + size[i] / 2, keep[i], size[i], line);
			free(malloc(1 + (size_t)i));	/* others come and go meanwhile */
		}
	for (int i = 0; i < BLOCKS; i++)
		free(keep[i]);
	return (void *)failures;
}

static void t_threads(void **state)
{
	(void)state;
	pthread_t t[THREADS];
	for (uintptr_t i = 0; i < THREADS; i++)
		assert_int_equal(pthread_create(&t[i], NULL, churn, (void *)(i + 1)), 0);
	for (int i = 0; i < THREADS; i++) {
		void *failures;
		pthread_join(t[i], &failures);
		assert_int_equal((uintptr_t)failures, 0);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_sizes),
		cmocka_unit_test(t_alignments),
		cmocka_unit_test(t_others),
		cmocka_unit_test(t_not_blocks),
		cmocka_unit_test(t_threads),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
