/* SPDX-License-Identifier: MIT */
/*
 * pthread_getattr_np() holds the thread's lock while it allocates (the CPU set's
 * buffer), and a thread's first walk for a caller asks for the thread's stack. A
 * thread that asks for its own attributes before it allocates anything, and two
 * new threads that ask for each other's at once, finish; the buffer is charged to
 * the line that asked, through libc's frame and the library's.
 */
#include <allocinfo.h>

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "site_report.h"

/* Joins t, failing if it has not ended within 20 s (it is stuck on a lock). */
static void join_or_fail(pthread_t t, const char *what)
{
	struct timespec until;
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += 20;
	int r = pthread_timedjoin_np(t, NULL, &until);
	if (r == ETIMEDOUT)
		fail_msg("%s: still waiting after 20 s", what);
	assert_int_equal(r, 0);
}

/* The CPU set glibc's pthread_getattr_np() allocates: from 32 bytes, doubled until
 * the kernel takes it. */
static long cpuset_bytes(void)
{
	char buf[1 << 16];
	for (long size = 32; size <= (long)sizeof(buf); size <<= 1)
		if (syscall(SYS_sched_getaffinity, 0, size, buf) >= 0)
			return size;
	return -1;
}

/* Each call leaves glibc's blocks live until the attributes are destroyed: the CPU
 * set, and what holds it. The thread's first walk is in the first call; the second
 * steps through frames it has learnt. */
static int first_line, second_line;
static pthread_attr_t first_attr, second_attr;
static int first_result = -1, second_result = -1;

static void *ask_own(void *arg)
{
	(void)arg;
	first_line = __LINE__ + 1;
	first_result = pthread_getattr_np(pthread_self(), &first_attr);
	second_line = __LINE__ + 1;
	second_result = pthread_getattr_np(pthread_self(), &second_attr);
	return NULL;
}

static void test_a_new_thread_asks_for_its_own(void **state)
{
	(void)state;
	pthread_t t;
	assert_int_equal(pthread_create(&t, NULL, ask_own, NULL), 0);
	join_or_fail(t, "a new thread's pthread_getattr_np() on itself");
	assert_int_equal(first_result, 0);
	assert_int_equal(second_result, 0);
	size_t size = 0;
	void *lo;
	assert_int_equal(pthread_attr_getstack(&first_attr, &lo, &size), 0);
	assert_true(size >= 16384);
	const char *san = getenv("ALLOCINFO_SANITIZER");
	if (san && strcmp(san, "no")) {
		/* The sanitizer's runtime comes first: the C library's allocations are its. */
		pthread_attr_destroy(&first_attr);
		pthread_attr_destroy(&second_attr);
		return;
	}
	/* Both calls charged alike to their own lines, each with the CPU set among its
	 * blocks: never to libc's line, nor to the library's. */
	struct site_counts first = site_lookup(__FILE__, first_line, "ask_own");
	struct site_counts second = site_lookup(__FILE__, second_line, "ask_own");
	long cpuset = cpuset_bytes();
	assert_true(cpuset > 0);
	assert_true(first.bytes >= cpuset);
	assert_true(first.calls >= 1);
	assert_int_equal(first.bytes, second.bytes);
	assert_int_equal(first.calls, second.calls);
	assert_int_equal(pthread_attr_destroy(&first_attr), 0);
	assert_int_equal(pthread_attr_destroy(&second_attr), 0);
	/* Freed: nothing left at either line (a caller's line with nothing live is not
	 * listed). */
	first = site_lookup(__FILE__, first_line, "ask_own");
	second = site_lookup(__FILE__, second_line, "ask_own");
	assert_int_equal(first.bytes + second.bytes, 0);
	assert_int_equal(first.calls + second.calls, 0);
}

/* Two new threads, each asking for the other's attributes as its first act. */
struct pair {
	pthread_barrier_t start, done;
	pthread_t thread[2];
	int result[2];
};

static void *ask_other(void *arg)
{
	struct pair *p = arg;
	pthread_barrier_wait(&p->start);	/* both handles are known past it */
	int me = pthread_equal(pthread_self(), p->thread[0]) ? 0 : 1;
	pthread_attr_t attr;
	p->result[me] = pthread_getattr_np(p->thread[1 - me], &attr);
	if (p->result[me] == 0)
		pthread_attr_destroy(&attr);
	pthread_barrier_wait(&p->done);	/* neither ends while the other asks */
	return NULL;
}

static void test_two_threads_ask_for_each_other(void **state)
{
	(void)state;
	for (int round = 0; round < 200; round++) {
		struct pair p = { .result = { -1, -1 } };
		assert_int_equal(pthread_barrier_init(&p.start, NULL, 3), 0);
		assert_int_equal(pthread_barrier_init(&p.done, NULL, 2), 0);
		for (int i = 0; i < 2; i++)
			assert_int_equal(pthread_create(&p.thread[i], NULL, ask_other, &p), 0);
		pthread_barrier_wait(&p.start);
		for (int i = 0; i < 2; i++)
			join_or_fail(p.thread[i], "two threads' pthread_getattr_np() on each other");
		assert_int_equal(p.result[0], 0);
		assert_int_equal(p.result[1], 0);
		pthread_barrier_destroy(&p.start);
		pthread_barrier_destroy(&p.done);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_a_new_thread_asks_for_its_own),
		cmocka_unit_test(test_two_threads_ask_for_each_other),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
