// SPDX-License-Identifier: MIT
// The library's once (once_flag.h), compiled into the test alone: many threads, one
// run, none back before it ended; a call from inside the function returns at once; a
// child forked while another thread ran it runs it again itself.
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern "C" {
#include <cmocka.h>
}

#include "once_flag.h"

using allocinfo::once_flag;

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
	nanosleep(&ts, nullptr);
}

// Many threads: the function runs once, slowly, and every caller returns after it.
static once_flag g_many;
static int g_many_runs;
static int g_many_done;	// set by the function as its last act
static int g_early;	// callers that returned before it was set

static void *call_many(void *)
{
	g_many.call([] {
		__atomic_add_fetch(&g_many_runs, 1, __ATOMIC_RELAXED);
		sleep_ms(50);
		__atomic_store_n(&g_many_done, 1, __ATOMIC_RELEASE);
	});
	if (!__atomic_load_n(&g_many_done, __ATOMIC_ACQUIRE))
		__atomic_add_fetch(&g_early, 1, __ATOMIC_RELAXED);
	return nullptr;
}

static void t_many_threads(void **)
{
	enum { THREADS = 16 };
	pthread_t th[THREADS];
	for (auto &t : th)
		assert_int_equal(pthread_create(&t, nullptr, call_many, nullptr), 0);
	for (auto &t : th)
		pthread_join(t, nullptr);
	assert_int_equal(g_many_runs, 1);
	assert_int_equal(g_early, 0);
	assert_true(g_many.done());
	g_many.call([] { g_many_runs++; });
	assert_int_equal(g_many_runs, 1);
}

// From inside the function (an allocation there that walks again): no wait for
// itself, and the inner call does not run it.
static once_flag g_nested;
static int g_nested_runs;

static void t_called_from_inside(void **)
{
	g_nested.call([] {
		g_nested_runs++;
		g_nested.call([] { g_nested_runs += 100; });
	});
	assert_int_equal(g_nested_runs, 1);
	assert_true(g_nested.done());
}

// A fork while another thread runs it: the parent's run ends there; the child, where
// that thread does not exist, runs it itself.
static once_flag g_forked;
static int g_forked_runs;
static int g_forked_started;

static void *run_slowly(void *)
{
	g_forked.call([] {
		g_forked_runs++;
		__atomic_store_n(&g_forked_started, 1, __ATOMIC_RELEASE);
		sleep_ms(300);
	});
	return nullptr;
}

static void t_fork_while_running(void **)
{
	pthread_t t;
	assert_int_equal(pthread_create(&t, nullptr, run_slowly, nullptr), 0);
	while (!__atomic_load_n(&g_forked_started, __ATOMIC_ACQUIRE))
		sleep_ms(1);
	pid_t pid = fork();
	if (pid == 0) {
		// g_forked_runs is 1 here, copied from the parent.
		alarm(10);	// a wait for the parent's thread would never end
		g_forked.call([] { g_forked_runs += 10; });
		_exit(g_forked_runs == 11 && g_forked.done() ? 0 : 1);
	}
	assert_true(pid > 0);
	int status;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	pthread_join(t, nullptr);
	assert_int_equal(g_forked_runs, 1);
	assert_true(g_forked.done());
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_many_threads),
		cmocka_unit_test(t_called_from_inside),
		cmocka_unit_test(t_fork_while_running),
	};
	return cmocka_run_group_tests(tests, nullptr, nullptr);
}
