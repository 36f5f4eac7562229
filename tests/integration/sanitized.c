/* SPDX-License-Identifier: MIT */
/*
 * A program without bugs, built with allocinfo-cc and a sanitizer (sanitizers.sh):
 * threads whose first allocations come inside the sanitizer's own start-up of each
 * thread, libc's allocations, aligned blocks, realloc, fork. With an argument of 1 it
 * checks exact counts from its own report; with 0, that nothing is counted (a
 * sanitizer's runtime linked into the executable, where the library steps aside).
 * Prints "ok" and exits 0, or names each failure and exits 1.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "site_report.h"

enum { THREADS = 4, ROUNDS = 2000 };
static void *kept[THREADS];
static int kept_line;
static int counted;
static int failures;

static void expect(int line, long long bytes, unsigned long long calls, const char *when)
{
	if (!counted)
		bytes = 0, calls = 0;
	struct site_counts c = site_lookup(__FILE__, line, NULL);
	if (c.bytes != bytes || c.calls != calls) {
		printf("%s: line %d holds %lld bytes in %llu calls, not %lld in %llu\n", when,
		       line, c.bytes, c.calls, bytes, calls);
		failures++;
	}
}

static void *work(void *arg)
{
	long t = (long)arg;
	for (int i = 0; i < ROUNDS; i++) {
		char *p = malloc(i % 300 + 1);
		memset(p, 1, i % 300 + 1);
		char *s = strdup("sanitized");
		void *a = aligned_alloc(64, 128);
		p = realloc(p, 500);
		free(a);
		free(s);
		free(p);
	}
	__atomic_store_n(&kept_line, __LINE__ + 1, __ATOMIC_RELAXED);
	kept[t] = calloc(1, 100);
	return NULL;
}

int main(int argc, char **argv)
{
	counted = argc > 1 && atoi(argv[1]);
	pthread_t th[THREADS];
	for (long t = 0; t < THREADS; t++)
		pthread_create(&th[t], NULL, work, (void *)t);
	for (int t = 0; t < THREADS; t++)
		pthread_join(th[t], NULL);
	expect(kept_line, 100 * THREADS, THREADS, "threads");
	pid_t pid = fork();
	if (pid == 0) {
		int line = __LINE__ + 1;
		char *c = malloc(33);
		memset(c, 2, 33);
		expect(line, 33, 1, "child");
		free(c);
		for (int t = 0; t < THREADS; t++)
			free(kept[t]);
		expect(kept_line, 0, 0, "child, freed");
		fflush(stdout);
		_exit(failures ? 1 : 0);
	}
	int status;
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status)) {
		printf("the child failed\n");
		failures++;
	}
	for (int t = 0; t < THREADS; t++)
		free(kept[t]);
	expect(kept_line, 0, 0, "freed");
	puts(failures ? "FAIL" : "ok");
	return failures != 0;
}
