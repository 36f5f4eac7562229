/* SPDX-License-Identifier: MIT */
/*
 * Process life: fork while other threads allocate (the child starts from the parent's
 * counters and counts alone), thousands of short-lived threads whose memory others
 * free, and exec (the new program starts clean).
 */
#include <allocinfo.h>

#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "site_report.h"

#define HERE_NEXT (__LINE__ + 1)

static int torture(void)
{
	return getenv("ALLOCINFO_TORTURE") != NULL;
}

/* Sanitizers make forks of a big address space and thread start-up slow: the full
 * counts run in the plain build, a sample under sanitizers. */
static int sanitized(void)
{
	const char *san = getenv("ALLOCINFO_SANITIZER");
	return san && strcmp(san, "no") != 0;
}

/* ---- fork ------------------------------------------------------------------------ */

static int stop_churn;	/* atomic */
static int churn_line;

static void *churn(void *arg)
{
	(void)arg;
	void *ring[64] = { 0 };
	unsigned i = 0;
	while (!__atomic_load_n(&stop_churn, __ATOMIC_RELAXED)) {
		free(ring[i % 64]);
		ring[i % 64] = malloc(16 + i % 200);
		i++;
	}
	for (int k = 0; k < 64; k++)
		free(ring[k]);
	return NULL;
}

static int child_checks(int stable_line, struct site_counts at_fork, int child_line)
{
	/* the child's report is the parent's at the fork for what no thread changes */
	struct site_counts c = site_lookup(__FILE__, stable_line, "test_fork_with_threads");
	if (c.bytes != at_fork.bytes || c.calls != at_fork.calls)
		return 10;
	void *mine = malloc(77);	/* charged to the line child_line records */
	c = site_lookup(__FILE__, child_line, "child_checks");
	if (c.bytes != 77 || c.calls != 1)
		return 11;
	free(mine);
	return 0;
}

static void test_fork_with_threads(void **state)
{
	pthread_t t[4];
	/* AddressSanitizer's allocator is not fork-safe (a child can inherit its lock held
	 * by a churning thread): under sanitizers the forks run without those threads. */
	int nthreads = sanitized() ? 0 : 4;
	__atomic_store_n(&stop_churn, 0, __ATOMIC_RELAXED);
	for (int i = 0; i < nthreads; i++)
		assert_int_equal(pthread_create(&t[i], NULL, churn, NULL), 0);
	int stable_line = HERE_NEXT;
	void *stable = malloc(4096);
	int child_line = 0;
	{
		/* the line of child_checks' malloc, found once by name */
		FILE *f = fopen(__FILE__, "r");
		if (f) {
			char l[512];
			for (int n = 1; fgets(l, sizeof(l), f); n++)
				if (strstr(l, "void *mine = malloc(77);")) {
					child_line = n;
					break;
				}
			fclose(f);
		}
	}
	if (!child_line)
		skip();	/* the source is not where it was compiled */
	/* Each fork of a process whose threads churn takes 10-30 ms here, and the threads
	 * keep every core busy meanwhile: 300 in make check, many more in make regtest. */
	int forks = torture() ? 20000 : sanitized() ? 30 : 300;
	for (int i = 0; i < forks; i++) {
		struct site_counts before = site_lookup(__FILE__, stable_line, "test_fork_with_threads");
		assert_int_equal(before.bytes, 4096);
		pid_t pid = fork();
		assert_true(pid >= 0);
		if (pid == 0)
			_exit(child_checks(stable_line, before, child_line));
		int status;
		assert_int_equal(waitpid(pid, &status, 0), pid);
		assert_true(WIFEXITED(status));
		assert_int_equal(WEXITSTATUS(status), 0);
		/* the child's allocation never shows in the parent */
		struct site_counts c = site_lookup(__FILE__, child_line, "child_checks");
		assert_int_equal(c.bytes, 0);
		assert_int_equal(c.calls, 0);
	}
	__atomic_store_n(&stop_churn, 1, __ATOMIC_RELAXED);
	for (int i = 0; i < nthreads; i++)
		pthread_join(t[i], NULL);
	free(stable);
	(void)churn_line;
}

/* ---- short-lived threads ----------------------------------------------------------- */

#define BATCH 50
enum { thread_line = __LINE__ + 4 };	/* the malloc below */
static void *short_lived(void *arg)
{
	void **slot = arg;
	*slot = malloc(48);
	return NULL;
}

static void test_short_lived_threads(void **state)
{
	int total = torture() ? 200000 : sanitized() ? 1000 : 10000;
	void *slots[BATCH];
	for (int done = 0; done < total; done += BATCH) {
		pthread_t t[BATCH];
		for (int i = 0; i < BATCH; i++)
			assert_int_equal(pthread_create(&t[i], NULL, short_lived, &slots[i]), 0);
		for (int i = 0; i < BATCH; i++)
			pthread_join(t[i], NULL);
		/* the threads are gone; another one frees what they allocated */
		if (done == 0)
			assert_site(__FILE__, thread_line, "short_lived", 48 * BATCH, BATCH);
		for (int i = 0; i < BATCH; i++)
			free(slots[i]);
	}
	assert_site(__FILE__, thread_line, "short_lived", 0, 0);
}

/* ---- exec -------------------------------------------------------------------------- */

/* The store file's identity: inode and change time (inode numbers are reused at once
 * on some file systems). */
static int store_inode(unsigned long long *ino)
{
	char path[512];
	const char *dir = getenv("ALLOCINFO_STORE_DIR");
	snprintf(path, sizeof(path), "%s/allocinfo-%d", dir ? dir : "/dev/shm", (int)getpid());
	struct stat st;
	if (stat(path, &st) != 0)
		return -1;
	*ino = (unsigned long long)st.st_ino * 1000003ull ^ (unsigned long long)st.st_ctim.tv_nsec ^
	       (unsigned long long)st.st_ctim.tv_sec << 32;
	return 0;
}

static int exec_line;

static int after_exec(const char *old_inode)
{
	/* the new program: its own store, and nothing of the old image's counts */
	unsigned long long ino;
	if (store_inode(&ino) != 0)
		return 20;
	if (ino == strtoull(old_inode, NULL, 10))
		return 21;
	exec_line = 0;
	struct site_counts c = site_lookup(__FILE__, 0, NULL);
	(void)c;
	const char *r = site_report_text();
	if (!strstr(r, "allocinfo - version: 2.0"))
		return 22;
	/* the line that allocated 3000 bytes before exec is back to 0 0 */
	char want[64];
	snprintf(want, sizeof(want), "test_process.c:%s ", getenv("EXEC_LINE"));
	for (const char *l = r; *l;) {
		const char *nl = strchr(l, '\n');
		if (strstr(l, want) && (!nl || strstr(l, want) < nl) && strncmp(l, "           0        0", 21))
			return 23;
		if (!nl)
			break;
		l = nl + 1;
	}
	return 0;
}

static void test_exec_starts_clean(void **state)
{
	if (!getenv("ALLOCINFO_STORE_DIR") || getenv("ALLOCINFO_STORE"))
		skip();
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		exec_line = HERE_NEXT;
		void *p = malloc(3000);
		(void)p;
		unsigned long long ino;
		if (store_inode(&ino) != 0)
			_exit(30);
		char ino_s[32], line_s[32], self[4096];
		snprintf(ino_s, sizeof(ino_s), "%llu", ino);
		snprintf(line_s, sizeof(line_s), "%d", exec_line);
		ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
		if (n <= 0)
			_exit(31);
		self[n] = '\0';
		setenv("EXEC_LINE", line_s, 1);
		execl(self, self, "after-exec", ino_s, (char *)NULL);
		_exit(32);
	}
	int status;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

int main(int argc, char **argv)
{
	if (argc == 3 && strcmp(argv[1], "after-exec") == 0)
		return after_exec(argv[2]);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fork_with_threads),
		cmocka_unit_test(test_short_lived_threads),
		cmocka_unit_test(test_exec_starts_clean),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
