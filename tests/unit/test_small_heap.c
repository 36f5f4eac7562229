/* SPDX-License-Identifier: MIT */
/*
 * The library's small-block heap: counted blocks of up to 1032 bytes live in size
 * classes of its own, with the size and tag in the slot's last 8 bytes.
 *  - every size gets its class's usable size, all of it writable, counted exactly;
 *  - calloc zeroes a reused slot; realloc stays in place within a class and moves
 *    across classes and to and from glibc, keeping the contents;
 *  - threads free each other's blocks, and a thread's cached slots go back for other
 *    threads when it exits;
 *  - after fork the child allocates and frees in every class and counts exactly, also
 *    in a class whose lock another thread held at the fork;
 *  - ALLOCINFO_HEAP=glibc turns the heap off.
 * Under a sanitizer the library has no such heap (the sanitizer must see every
 * block): the tests skip there, and fail if the heap is missing anywhere else.
 */
#include <allocinfo.h>

#include <errno.h>
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <malloc.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "site_report.h"
#include "spawn_self.h"

/* The tests below free blocks twice, use freed addresses, and free a pointer into a
 * block, on purpose. */
#pragma GCC diagnostic ignored "-Wpragmas"
#pragma GCC diagnostic ignored "-Wuse-after-free"
#pragma GCC diagnostic ignored "-Wfree-nonheap-object"

/* Skips under a sanitizer; elsewhere the heap must be there. */
static void need_heap(void)
{
	const char *san = getenv("ALLOCINFO_SANITIZER");
	if (san && strcmp(san, "no"))
		skip();
	assert_int_equal(allocinfo__inline_v1.small_max, 1032);
}

static int m_line;
static void *m_block(size_t n)
{
	m_line = __LINE__ + 1;
	return malloc(n);
}

static int c_line;
static void *c_block(size_t n, size_t size)
{
	c_line = __LINE__ + 1;
	return calloc(n, size);
}

static int r_line;
static void *r_block(void *p, size_t n)
{
	r_line = __LINE__ + 1;
	return realloc(p, n);
}

/* Requests and the usable size each gets: classes of 24 + 16k bytes up to 1032, then
 * a glibc block with a record. */
static const struct {
	size_t request, usable;
} sizes[] = {
	{ 0, 24 },     { 1, 24 },     { 24, 24 },     { 25, 40 },     { 32, 40 },
	{ 40, 40 },    { 41, 56 },    { 64, 72 },     { 100, 104 },   { 256, 264 },
	{ 1000, 1000 }, { 1001, 1016 }, { 1031, 1032 }, { 1032, 1032 },
};

static void test_sizes_and_usable(void **state)
{
	(void)state;
	need_heap();
	enum { N = sizeof(sizes) / sizeof(sizes[0]) };
	void *p[N + 1];
	long long bytes = 0;
	for (int i = 0; i < N; i++) {
		p[i] = m_block(sizes[i].request);
		assert_non_null(p[i]);
		assert_int_equal((uintptr_t)p[i] % 16, 0);
		assert_int_equal(malloc_usable_size(p[i]), sizes[i].usable);
		memset(p[i], 0xa5, sizes[i].usable);	/* every usable byte */
		bytes += (long long)sizes[i].request;
	}
	p[N] = m_block(1033);	/* one past the heap: glibc's, with a record */
	assert_non_null(p[N]);
	assert_true(malloc_usable_size(p[N]) >= 1033);
	memset(p[N], 0xa5, malloc_usable_size(p[N]));
	assert_site(__FILE__, m_line, "m_block", bytes + 1033, N + 1);
	for (int i = 0; i <= N; i++)
		free(p[i]);
	assert_site(__FILE__, m_line, "m_block", 0, 0);
}

/* A freed slot is the next one handed out in its class, by this thread: calloc must
 * clear what the last owner wrote. */
static void test_calloc_clears_a_reused_slot(void **state)
{
	(void)state;
	need_heap();
	void *p = m_block(64);
	memset(p, 0xff, malloc_usable_size(p));
	free(p);
	unsigned char *q = c_block(8, 8);
	assert_ptr_equal(q, p);
	for (int k = 0; k < 64; k++)
		assert_int_equal(q[k], 0);
	assert_site(__FILE__, c_line, "c_block", 64, 1);
	free(q);
	assert_site(__FILE__, c_line, "c_block", 0, 0);
}

static void fill(void *p, size_t n)
{
	for (size_t k = 0; k < n; k++)
		((unsigned char *)p)[k] = (unsigned char)(k * 7 + 1);
}

static void assert_filled(const void *p, size_t n)
{
	for (size_t k = 0; k < n; k++)
		assert_int_equal(((const unsigned char *)p)[k], (unsigned char)(k * 7 + 1));
}

static void test_realloc_in_place_and_across(void **state)
{
	(void)state;
	need_heap();
	void *p = m_block(30);
	fill(p, 40);
	void *q = r_block(p, 40);	/* the same class: in place, charged here */
	assert_ptr_equal(q, p);
	assert_site(__FILE__, m_line, "m_block", 0, 0);
	assert_site(__FILE__, r_line, "r_block", 40, 1);
	q = r_block(q, 33);
	assert_ptr_equal(q, p);
	assert_site(__FILE__, r_line, "r_block", 33, 1);
	assert_filled(q, 33);

	fill(q, 40);
	q = r_block(q, 41);		/* the next class: moved, with all 40 usable bytes */
	assert_ptr_not_equal(q, p);
	assert_int_equal(malloc_usable_size(q), 56);
	assert_filled(q, 40);
	assert_site(__FILE__, r_line, "r_block", 41, 1);

	fill(q, 56);
	q = r_block(q, 5000);		/* to glibc */
	assert_non_null(q);
	assert_filled(q, 56);
	assert_site(__FILE__, r_line, "r_block", 5000, 1);
	fill(q, 5000);
	q = r_block(q, 10);		/* and back */
	assert_int_equal(malloc_usable_size(q), 24);
	assert_filled(q, 10);
	assert_site(__FILE__, r_line, "r_block", 10, 1);
	free(q);
	assert_site(__FILE__, r_line, "r_block", 0, 0);
}

/* This program as `argv0 mode`, with the default heap or env_add's. */
static int run_child(const char *mode, const char *env_add, char *err, size_t errlen)
{
	static const char *const drop[] = { "ALLOCINFO_HEAP=", NULL };
	const char *add[] = { env_add, NULL };
	return spawn_self(mode, drop, add, err, errlen);
}

/* ---- threads ---------------------------------------------------------------------- */

enum { THREADS = 8, PER_THREAD = 3000 };

static void *blocks[THREADS][PER_THREAD];
static pthread_barrier_t barrier;

static size_t size_at(int t, int i)
{
	return (size_t)(i * 13 + t * 101) % 1100;	/* every class, and a few beyond */
}

/* Allocates its row, writing its own pattern over every usable byte; after the
 * barrier, checks and frees the next thread's row. */
static void *swap_worker(void *arg)
{
	int t = (int)(intptr_t)arg;
	for (int i = 0; i < PER_THREAD; i++) {
		blocks[t][i] = m_block(size_at(t, i));
		memset(blocks[t][i], t + 1, malloc_usable_size(blocks[t][i]));
	}
	pthread_barrier_wait(&barrier);
	pthread_barrier_wait(&barrier);	/* the main thread reads the counts */
	int u = (t + 1) % THREADS;
	for (int i = 0; i < PER_THREAD; i++) {
		unsigned char *b = blocks[u][i];
		size_t n = malloc_usable_size(b);
		for (size_t k = 0; k < n; k++)
			if (b[k] != u + 1)
				return (void *)1;	/* two blocks shared bytes */
		free(b);
	}
	return NULL;
}

static void test_threads_free_each_others(void **state)
{
	(void)state;
	need_heap();
	for (int round = 0; round < 3; round++) {	/* later rounds reuse freed slots */
		pthread_t th[THREADS];
		pthread_barrier_init(&barrier, NULL, THREADS + 1);
		for (int t = 0; t < THREADS; t++)
			assert_int_equal(pthread_create(&th[t], NULL, swap_worker,
							(void *)(intptr_t)t), 0);
		pthread_barrier_wait(&barrier);
		long long bytes = 0;
		for (int t = 0; t < THREADS; t++)
			for (int i = 0; i < PER_THREAD; i++)
				bytes += (long long)size_at(t, i);
		assert_site(__FILE__, m_line, "m_block", bytes, THREADS * PER_THREAD);
		pthread_barrier_wait(&barrier);
		for (int t = 0; t < THREADS; t++) {
			void *ret;
			assert_int_equal(pthread_join(th[t], &ret), 0);
			assert_null(ret);
		}
		pthread_barrier_destroy(&barrier);
		assert_site(__FILE__, m_line, "m_block", 0, 0);
	}
}

/* A thread's first allocation takes its counter shard, and with it a cache. */
static void *alloc_free_1000(void *arg)
{
	(void)arg;
	free(m_block(8));
	void *p = m_block(1000);
	free(p);
	return p;	/* only its address */
}

/* Its first allocation is of the same class: one of another class could take the
 * span the first thread's exit emptied, the pool's newest, when its own class has
 * no slot to give (the idle classes' slots sent back by a refill that wants a
 * span). */
static void *alloc_1000(void *arg)
{
	(void)arg;
	free(m_block(1000));
	return m_block(1000);
}

/* The slot a thread freed into its cache is the next one of its class that a new
 * thread gets: the exiting thread gave its cache back. */
static void test_exiting_thread_gives_its_cache_back(void **state)
{
	(void)state;
	need_heap();
	/* No slot of the class out but the first thread's: batches the earlier tests'
	 * threads left waiting would be sent back with its cache (the class idle), and
	 * the span they empty last would be the one the second thread gets. */
	malloc_trim(0);
	pthread_t t;
	void *freed, *got;
	assert_int_equal(pthread_create(&t, NULL, alloc_free_1000, NULL), 0);
	assert_int_equal(pthread_join(t, &freed), 0);
	assert_int_equal(pthread_create(&t, NULL, alloc_1000, NULL), 0);
	assert_int_equal(pthread_join(t, &got), 0);
	assert_ptr_equal(got, freed);
	assert_site(__FILE__, m_line, "m_block", 1000, 1);
	free(got);
	assert_site(__FILE__, m_line, "m_block", 0, 0);
}

/* ---- fork ------------------------------------------------------------------------- */

/* In a child: allocates and frees in every class, many times over (refilling from
 * and flushing to every central list); 0 if the counts come out exact. */
static int every_class_in_child(void)
{
	static void *p[66 * 40];
	for (int round = 0; round < 5; round++) {
		int n = 0;
		for (size_t size = 0; size <= 1040; size += 16)
			for (int k = 0; k < 40; k++)
				p[n++] = m_block(size);
		for (int i = 0; i < n; i++)
			free(p[i]);
	}
	struct site_counts c = site_lookup(__FILE__, m_line, "m_block");
	return c.bytes == 0 && c.calls == 0 ? 0 : 1;
}

static void test_fork_child_frees_and_allocates(void **state)
{
	(void)state;
	need_heap();
	void *p[100];
	for (int i = 0; i < 100; i++)
		p[i] = m_block((size_t)i * 10);
	long long bytes = 10 * 99 * 100 / 2;
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		for (int i = 0; i < 100; i += 2)
			free(p[i]);
		struct site_counts c = site_lookup(__FILE__, m_line, "m_block");
		if (c.bytes != 10 * 50 * 50 || c.calls != 50)	/* the odd i */
			_exit(1);
		for (int i = 1; i < 100; i += 2)
			free(p[i]);
		_exit(every_class_in_child());
	}
	int status;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	assert_site(__FILE__, m_line, "m_block", bytes, 100);
	for (int i = 0; i < 100; i++)
		free(p[i]);
	assert_site(__FILE__, m_line, "m_block", 0, 0);
}

/* A thread that allocates blocks of 984 bytes (one class) until one stalls: it then
 * sits in the heap's refill, holding that class's lock, on a page fault that
 * userfaultfd keeps waiting. */
enum { STALL_SIZE = 984, STALL_MAX_BLOCKS = 20000 };
static void *stall_blocks[STALL_MAX_BLOCKS];
static int stall_count, stall_stop;

static void *allocate_until_stalled(void *arg)
{
	(void)arg;
	free(m_block(8));	/* takes a counter shard, and with it a cache */
	for (stall_count = 0; stall_count < STALL_MAX_BLOCKS &&
			      !__atomic_load_n(&stall_stop, __ATOMIC_ACQUIRE);
	     stall_count++)
		stall_blocks[stall_count] = m_block(STALL_SIZE);
	return NULL;
}

/* The end of the mapping that holds p, from /proc/self/maps. */
static uintptr_t mapping_end(const void *p)
{
	FILE *f = fopen("/proc/self/maps", "r");
	assert_non_null(f);
	char line[512];
	uintptr_t end = 0;
	while (fgets(line, sizeof(line), f)) {
		unsigned long lo, hi;
		if (sscanf(line, "%lx-%lx", &lo, &hi) == 2 && (uintptr_t)p - lo < hi - lo)
			end = hi;
	}
	fclose(f);
	assert_true(end != 0);
	return end;
}

/* A child forked while another thread holds a class's lock allocates in that class:
 * it must find the lock free (the child reinitialises them), not wait for a thread
 * that the child does not have. The lock is made to be held at fork by stalling its
 * holder on a page fault of the heap's unused space, registered with userfaultfd:
 * the first slots carved there fault while refill holds the lock. In the child the
 * range is not registered, so its own faults are plain ones. */
static void test_fork_while_a_lock_is_held(void **state)
{
	(void)state;
	need_heap();
	int uffd = (int)syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK | UFFD_USER_MODE_ONLY);
	if (uffd < 0)
		skip();	/* no userfaultfd in this kernel, or not allowed */
	struct uffdio_api api = { .api = UFFD_API };
	assert_int_equal(ioctl(uffd, UFFDIO_API, &api), 0);

	/* The last 256 KiB of the heap's mapping: spans the tests before have not
	 * reached (the heap hands out spans from its start, and maps 4 MiB at a time);
	 * and every empty span before them purged, so that they are handed out first. */
	void *probe = m_block(STALL_SIZE);
	uintptr_t start = mapping_end(probe) - (256 << 10);
	free(probe);
	malloc_trim(0);
	struct uffdio_register reg = {
		.range = { .start = start, .len = 256 << 10 },
		.mode = UFFDIO_REGISTER_MODE_MISSING,
	};
	assert_int_equal(ioctl(uffd, UFFDIO_REGISTER, &reg), 0);

	pthread_t t;
	assert_int_equal(pthread_create(&t, NULL, allocate_until_stalled, NULL), 0);
	struct pollfd pfd = { .fd = uffd, .events = POLLIN };
	assert_int_equal(poll(&pfd, 1, 20000), 1);	/* the thread is stalled */
	struct uffd_msg msg;
	assert_int_equal(read(uffd, &msg, sizeof(msg)), (ssize_t)sizeof(msg));
	assert_int_equal(msg.event, UFFD_EVENT_PAGEFAULT);
	assert_true(msg.arg.pagefault.address - start < (256 << 10));

	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		void *p[100];
		for (int k = 0; k < 100; k++)	/* more than a cache holds: a refill */
			p[k] = malloc(STALL_SIZE);
		for (int k = 0; k < 100; k++)
			free(p[k]);
		_exit(0);
	}
	int status = 0;
	pid_t r = 0;
	for (int waited = 0; waited < 500 && (r = waitpid(pid, &status, WNOHANG)) == 0; waited++)
		nanosleep(&(struct timespec){ 0, 10 * 1000 * 1000 }, NULL);
	if (r == 0) {
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
	}
	__atomic_store_n(&stall_stop, 1, __ATOMIC_RELEASE);
	close(uffd);	/* the stalled fault is served as a plain one */
	assert_int_equal(pthread_join(t, NULL), 0);
	for (int k = 0; k < stall_count; k++)
		free(stall_blocks[k]);
	if (r == 0)
		fail_msg("the child hangs in the lock its parent's thread held at fork");
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	assert_true(stall_count < STALL_MAX_BLOCKS);	/* it stalled, and went on */
	assert_site(__FILE__, m_line, "m_block", 0, 0);
}

/* ---- the switch ----------------------------------------------------------------- */

static int child_glibc_heap(void)
{
	if (allocinfo__inline_v1.small_max != 0)
		return 1;
	void *p = m_block(1);
	/* glibc's 32-byte chunk less its header and the record, not a class of 24 */
	if (malloc_usable_size(p) != 8)
		return 2;
	struct site_counts c = site_lookup(__FILE__, m_line, "m_block");
	if (c.bytes != 1 || c.calls != 1)
		return 3;
	free(p);
	return 0;
}

static void test_glibc_heap_when_asked(void **state)
{
	(void)state;
	need_heap();
	char err[4096];
	assert_int_equal(run_child("glibc", "ALLOCINFO_HEAP=glibc", err, sizeof(err)), 0);
	assert_string_equal(err, "");
}

int main(int argc, char **argv)
{
	if (argc == 2 && !strcmp(argv[1], "glibc"))
		return child_glibc_heap();
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sizes_and_usable),
		cmocka_unit_test(test_calloc_clears_a_reused_slot),
		cmocka_unit_test(test_realloc_in_place_and_across),
		cmocka_unit_test(test_threads_free_each_others),
		cmocka_unit_test(test_exiting_thread_gives_its_cache_back),
		cmocka_unit_test(test_fork_child_frees_and_allocates),
		cmocka_unit_test(test_fork_while_a_lock_is_held),
		cmocka_unit_test(test_glibc_heap_when_asked),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
