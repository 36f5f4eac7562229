/* SPDX-License-Identifier: MIT */
/*
 * pthread_getattr_np() holds the thread's lock while it allocates (the CPU set's
 * buffer), and a thread's first walk for a caller asks for the thread's stack. A
 * thread that asks for its own attributes before it allocates anything, and two
 * new threads that ask for each other's at once, finish; the buffer is charged to
 * the line that asked, through libc's frame and the library's.
 */
#include <allocinfo.h>

#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "site_report.h"
#include "spawn_self.h"

#define CASE_SECONDS 20

/* This thread's CPU set, as glibc's pthread_getattr_np() asks for it: from 32 bytes,
 * doubled until the kernel takes it. Its size, or -1. */
static char cpuset[1 << 16];
static long read_cpuset(void)
{
	for (long size = 32; size <= (long)sizeof(cpuset); size <<= 1)
		if (syscall(SYS_sched_getaffinity, 0, size, cpuset) >= 0)
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

static int sanitized(void)
{
	const char *san = getenv("ALLOCINFO_SANITIZER");
	return san && strcmp(san, "no") != 0;
}

static int child_own(void)
{
	pthread_t t;
	if (pthread_create(&t, NULL, ask_own, NULL) != 0 || pthread_join(t, NULL) != 0)
		return 90;
	if (first_result != 0 || second_result != 0)
		return 10;
	size_t size = 0;
	void *lo;
	if (pthread_attr_getstack(&first_attr, &lo, &size) != 0 || size < 16384)
		return 11;
	/* Under a sanitizer its runtime comes first: the C library's allocations are
	 * its, not the library's. */
	int code = 0;
	if (!sanitized()) {
		/* What the attributes hold, made here by the call glibc makes for them
		 * (the CPU set's copy, and what holds it): each call is charged exactly
		 * that, at its own line, never at libc's line or the library's. */
		long set_size = read_cpuset();
		pthread_attr_t ref;
		pthread_attr_init(&ref);
		int ref_line = __LINE__ + 1;
		int set = pthread_attr_setaffinity_np(&ref, (size_t)set_size, (cpu_set_t *)cpuset);
		struct site_counts want = site_lookup(__FILE__, ref_line, "child_own");
		struct site_counts first = site_lookup(__FILE__, first_line, "ask_own");
		struct site_counts second = site_lookup(__FILE__, second_line, "ask_own");
		pthread_attr_destroy(&ref);
		if (set_size <= 0 || set != 0 || want.bytes < set_size || want.calls < 1 ||
		    first.bytes != want.bytes || first.calls != want.calls ||
		    second.bytes != want.bytes || second.calls != want.calls) {
			fprintf(stderr, "wanted %lld %llu (a CPU set of %ld bytes); first call "
				"%lld %llu, second %lld %llu\n%s", want.bytes, want.calls, set_size,
				first.bytes, first.calls, second.bytes, second.calls,
				site_report_text());
			code = 12;
		}
	}
	pthread_attr_destroy(&first_attr);
	pthread_attr_destroy(&second_attr);
	if (code || sanitized())
		return code;
	/* Freed: nothing left at either line (a caller's line with nothing live is not
	 * listed). */
	struct site_counts first = site_lookup(__FILE__, first_line, "ask_own");
	struct site_counts second = site_lookup(__FILE__, second_line, "ask_own");
	return first.bytes || second.bytes || first.calls || second.calls ? 13 : 0;
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

static int child_pair(void)
{
	for (int round = 0; round < 1000; round++) {
		struct pair p = { .result = { -1, -1 } };
		pthread_barrier_init(&p.start, NULL, 3);
		pthread_barrier_init(&p.done, NULL, 2);
		for (int i = 0; i < 2; i++)
			if (pthread_create(&p.thread[i], NULL, ask_other, &p) != 0)
				return 90;
		pthread_barrier_wait(&p.start);
		for (int i = 0; i < 2; i++)
			pthread_join(p.thread[i], NULL);
		if (p.result[0] != 0 || p.result[1] != 0)
			return 20;
		pthread_barrier_destroy(&p.start);
		pthread_barrier_destroy(&p.done);
	}
	return 0;
}

/* Each case in a fresh process, whose threads walk for the first time: a thread left
 * waiting on a lock in one could keep another case from walking at all. The alarm
 * ends a process that waits for ever. */
static void run_case(const char *mode, const char *what)
{
	char err[8192];
	int status = spawn_self_status(mode, NULL, NULL, err, sizeof(err));
	if (WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM)
		fail_msg("%s: still waiting after %d s", what, CASE_SECONDS);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		fail_msg("%s: status %#x: %s", what, status, err);
}

static void test_a_new_thread_asks_for_its_own(void **state)
{
	(void)state;
	run_case("own", "a new thread's pthread_getattr_np() on itself");
}

static void test_two_threads_ask_for_each_other(void **state)
{
	(void)state;
	run_case("pair", "two new threads' pthread_getattr_np() on each other, 1000 times");
}

int main(int argc, char **argv)
{
	if (argc == 2) {
		alarm(CASE_SECONDS);
		if (strcmp(argv[1], "own") == 0)
			return child_own();
		if (strcmp(argv[1], "pair") == 0)
			return child_pair();
		return 2;
	}
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_a_new_thread_asks_for_its_own),
		cmocka_unit_test(test_two_threads_ask_for_each_other),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
