/* SPDX-License-Identifier: MIT */
/*
 * fork() in the awkward places: after an instrumented library with live memory was
 * dlclose'd; from several threads at once, in a fresh process, so that every child
 * and then the parent must load the reader (no fork may keep the library's load lock);
 * and from inside a liburcu call_rcu callback. Each child must come alive (no lock
 * inherited held), count exactly from the parent's figures, and exit; a child that
 * hangs is killed by its alarm and the test fails. And what a child costs: its fork
 * handlers bind no function through the loader (each binding faults in loader and
 * symbol-table pages in every child).
 */
#include <allocinfo.h>

#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <urcu/urcu-bp.h>

#include <cmocka.h>

#include "dl_util.h"
#include "site_report.h"
#include "spawn_self.h"

#define CHILD_SECONDS 10

static int child_line;

/* In a child: a fresh site counts exactly, and the plugin's unloaded tag (when given)
 * still shows the parent's live bytes. Returns the exit status: 0 when right. */
static int child_checks(int plugin_line, long long plugin_bytes)
{
	alarm(CHILD_SECONDS);
	if (plugin_line) {
		struct site_counts c = site_lookup("plugin.c", plugin_line, "plugin_alloc");
		if (!c.found || !c.unloaded || c.bytes != plugin_bytes || c.calls != 2)
			return 10;
	}
	child_line = __LINE__ + 1;
	void *mine = malloc(77);
	struct site_counts c = site_lookup(__FILE__, child_line, "child_checks");
	if (c.bytes != 77 || c.calls != 1)
		return 11;
	free(mine);
	c = site_lookup(__FILE__, child_line, "child_checks");
	return c.bytes == 0 && c.calls == 0 ? 0 : 12;
}

/* Waits for pid; its exit status, 100 + signal, or 99 when it hung (inside fork,
 * before its own alarm): then it is killed. */
static int reap(pid_t pid)
{
	struct timespec tick = { 0, 5 * 1000 * 1000 };
	for (int i = 0; i < CHILD_SECONDS * 200; i++) {
		int status;
		pid_t r = waitpid(pid, &status, WNOHANG);
		if (r == pid)
			return WIFEXITED(status) ? WEXITSTATUS(status) : 100 + WTERMSIG(status);
		if (r < 0)
			return -1;
		nanosleep(&tick, NULL);
	}
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	return 99;
}

static void test_fork_after_dlclose(void **state)
{
	(void)state;
	struct plugin pl;
	if (plugin_open(&pl) != 0)
		fail_msg("cannot load the plugin");
	void *a = pl.alloc(300), *b = pl.alloc(33);
	int line = pl.malloc_line;
	assert_int_equal(dlclose(pl.handle), 0);	/* its module record goes to RCU */
	for (int round = 0; round < 3; round++) {
		pid_t pid = fork();
		assert_true(pid >= 0);
		if (pid == 0)
			_exit(child_checks(line, 333));
		assert_int_equal(reap(pid), 0);
	}
	free(a);
	free(b);
	assert_false(site_lookup("plugin.c", line, "plugin_alloc").found);
}

/* ---- forks from several threads at once ------------------------------------------- */

#define FORKERS 4
#define FORKS_EACH 10

/* GCC 12's AddressSanitizer takes no lock of its own allocator around fork(): a
 * child forked while another thread is inside ASan's malloc waits for ever on that
 * thread's lock (about one run in three here). Under ASan the forkers take turns
 * from their malloc to their free, so the fork handlers still run from several
 * threads but never while another of them is in ASan's allocator; elsewhere they
 * race freely. */
#if defined(__SANITIZE_ADDRESS__)
#define TAKE_TURNS 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TAKE_TURNS 1
#endif
#endif
#ifndef TAKE_TURNS
#define TAKE_TURNS 0
#endif
static pthread_mutex_t g_turn = PTHREAD_MUTEX_INITIALIZER;
/* Thread creation and exit use ASan's allocator too: no forker starts before all
 * exist (and the main thread is done creating them), none ends before all are
 * done. */
static pthread_barrier_t g_all_there, g_all_done;

static void *forker(void *arg)
{
	(void)arg;
	void *result = NULL;
	if (TAKE_TURNS)
		pthread_barrier_wait(&g_all_there);
	for (int i = 0; i < FORKS_EACH && !result; i++) {
		if (TAKE_TURNS)
			pthread_mutex_lock(&g_turn);
		void *p = malloc(64 + i);
		pid_t pid = fork();
		if (pid == 0)
			_exit(child_checks(0, 0));
		free(p);
		if (TAKE_TURNS)
			pthread_mutex_unlock(&g_turn);
		if (pid < 0) {
			result = (void *)(intptr_t)-1;
			break;
		}
		int rc = reap(pid);
		if (rc != 0)
			result = (void *)(intptr_t)rc;
	}
	if (TAKE_TURNS)
		pthread_barrier_wait(&g_all_done);
	return result;
}

/* In a fresh process, whose library has loaded nothing yet: each child loads the
 * reader for its checks, and so does this process after the forks. A fork that left
 * the library's load lock held (or a child that inherits it held) fails the child's
 * checks or stops this process on its alarm. */
static int forks_from_threads(void)
{
	alarm(6 * CHILD_SECONDS);
	pthread_t t[FORKERS];
	pthread_barrier_init(&g_all_there, NULL, FORKERS + 1);
	pthread_barrier_init(&g_all_done, NULL, FORKERS);
	for (int i = 0; i < FORKERS; i++)
		if (pthread_create(&t[i], NULL, forker, NULL) != 0)
			return 90;
	if (TAKE_TURNS)
		pthread_barrier_wait(&g_all_there);
	int status = 0;
	for (int i = 0; i < FORKERS; i++) {
		void *rc;
		if (pthread_join(t[i], &rc) != 0)
			return 91;
		if (rc && !status)
			status = (int)(intptr_t)rc;
	}
	if (status)
		return status;
	int line = __LINE__ + 1;
	void *mine = malloc(55);
	struct site_counts c = site_lookup(__FILE__, line, "forks_from_threads");
	free(mine);
	return c.found && c.bytes == 55 && c.calls == 1 ? 0 : 92;
}

static void test_fork_from_threads(void **state)
{
	(void)state;
	char err[4096];
	struct timespec start, end;
	clock_gettime(CLOCK_MONOTONIC, &start);
	int rc = spawn_self("forks-from-threads", NULL, NULL, err, sizeof(err));
	clock_gettime(CLOCK_MONOTONIC, &end);
	/* The library's own lines only: LeakSanitizer adds its list of suppressions. */
	if (rc != 0 || strstr(err, "allocinfo:"))
		fail_msg("forks from %d threads: status %d, stderr: %s", FORKERS, rc, err);
	/* A fork that waits for a load lock another fork kept shows here as 2 s. */
	fprintf(stderr, "%d forks from %d threads took %.2f s\n", FORKERS * FORKS_EACH,
		FORKERS, (double)(end.tv_sec - start.tv_sec) +
		(double)(end.tv_nsec - start.tv_nsec) / 1e9);
}

/* ---- fork from a call_rcu callback ------------------------------------------------- */

static struct rcu_head g_head;
static int g_callback_result = -1;	/* atomic; -1 until the callback has run */

static void fork_in_callback(struct rcu_head *head)
{
	(void)head;
	pid_t pid = fork();
	if (pid == 0)
		_exit(child_checks(0, 0));
	__atomic_store_n(&g_callback_result, pid < 0 ? -2 : reap(pid), __ATOMIC_RELEASE);
}

static void test_fork_from_call_rcu(void **state)
{
	(void)state;
	urcu_bp_call_rcu(&g_head, fork_in_callback);
	struct timespec tick = { 0, 10 * 1000 * 1000 };
	for (int i = 0; i < CHILD_SECONDS * 100; i++) {
		if (__atomic_load_n(&g_callback_result, __ATOMIC_ACQUIRE) != -1)
			break;
		nanosleep(&tick, NULL);
	}
	int rc = __atomic_load_n(&g_callback_result, __ATOMIC_ACQUIRE);
	if (rc == -1) {
		/* The call_rcu thread is stuck in fork: nothing can end it cleanly. */
		fprintf(stderr, "fork from a call_rcu callback hung\n");
		_exit(1);
	}
	assert_int_equal(rc, 0);
}

/* ---- what the child binds ----------------------------------------------------------- */

/* Run with LD_DEBUG=bindings: counts a block, forks, and prints the child's pid. The
 * child's _exit, never called before, is the one binding a plain child makes: it shows
 * that the child's bindings are seen. */
static int child_forks_once(void)
{
	void *p = malloc(40);
	free(p);
	pid_t pid = fork();
	if (pid == 0)
		_exit(0);
	if (pid < 0)
		return 80;
	printf("%d\n", (int)pid);
	fflush(stdout);
	return reap(pid);
}

static void test_fork_child_binds_nothing(void **state)
{
	(void)state;
	const char *san = getenv("ALLOCINFO_SANITIZER");
	if (san && strcmp(san, "no"))
		skip();	/* the sanitizer's own fork handlers bind what they bind */
	char dir[] = "/tmp/allocinfo-bind.XXXXXX";
	assert_non_null(mkdtemp(dir));
	char out[256], env_out[300], pid_file[300], err[4096];
	snprintf(out, sizeof(out), "%s/ld", dir);
	snprintf(env_out, sizeof(env_out), "LD_DEBUG_OUTPUT=%s", out);
	snprintf(pid_file, sizeof(pid_file), "ALLOCINFO_TEST_PID_FILE=%s/pid", dir);
	const char *drop[] = { "LD_DEBUG", NULL };
	const char *add[] = { "LD_DEBUG=bindings", env_out, pid_file, NULL };
	assert_int_equal(spawn_self("forks-once", drop, add, err, sizeof(err)), 0);
	char path[300];
	snprintf(path, sizeof(path), "%s/pid", dir);
	FILE *f = fopen(path, "r");
	assert_non_null(f);
	int child = 0;
	assert_int_equal(fscanf(f, "%d", &child), 1);
	fclose(f);
	/* The loader writes to LD_DEBUG_OUTPUT.<pid of the process that opened it>; the
	 * child inherits that file, and its lines start with its own pid. That pid is not
	 * the spawned test's, so every file of the directory is read. */
	char prefix[32];
	snprintf(prefix, sizeof(prefix), "%d:", child);
	int lines = 0, from_library = 0;
	char cmd[600];
	snprintf(cmd, sizeof(cmd), "cat %s/ld.*", dir);
	FILE *all = popen(cmd, "r");
	assert_non_null(all);
	char line[1024];
	while (fgets(line, sizeof(line), all)) {
		const char *l = line + strspn(line, " \t");
		if (strncmp(l, prefix, strlen(prefix)) || !strstr(l, "binding file"))
			continue;
		lines++;
		if (strstr(l, "liballocinfo")) {
			from_library++;
			fprintf(stderr, "the child bound: %s", l);
		}
	}
	pclose(all);
	snprintf(path, sizeof(path), "rm -rf %s", dir);
	assert_int_equal(system(path), 0);
	assert_true(lines >= 1);	/* _exit: the child's bindings were seen */
	assert_int_equal(from_library, 0);
}

int main(int argc, char **argv)
{
	if (argc == 2 && strcmp(argv[1], "forks-from-threads") == 0)
		return forks_from_threads();
	if (argc == 2 && strcmp(argv[1], "forks-once") == 0) {
		const char *pid_file = getenv("ALLOCINFO_TEST_PID_FILE");
		if (!pid_file || !freopen(pid_file, "w", stdout))
			return 81;
		return child_forks_once();
	}
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fork_after_dlclose),
		cmocka_unit_test(test_fork_from_threads),
		cmocka_unit_test(test_fork_from_call_rcu),
		cmocka_unit_test(test_fork_child_binds_nothing),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
