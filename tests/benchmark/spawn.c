/* SPDX-License-Identifier: MIT */
/*
 * What a process pays at start and at fork (make bench, the "process" rows):
 *   spawn exec N   N times: fork, exec /bin/true, wait. This program runs plain;
 *                  /bin/true gets LD_PRELOAD=$SPAWN_PRELOAD when that is set (and
 *                  the rest of this program's environment, ALLOCINFO_STORE too).
 *                  $SPAWN_PROGRAM, when set, is run instead, with $SPAWN_ARG as its
 *                  one argument.
 *   spawn fork N   N times: fork, _exit(0) in the child, wait; run under
 *                  LD_PRELOAD, it measures the fork of an instrumented process.
 * Prints "wall_ns_per_op=X cpu_ns_per_op=X" as the other benchmarks do (CPU time of
 * this process and its children).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static double now_ns(clockid_t clock)
{
	struct timespec ts;
	clock_gettime(clock, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static double children_cpu_ns(void)
{
	struct rusage ru;
	getrusage(RUSAGE_CHILDREN, &ru);
	return (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e9 +
	       (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e3;
}

int main(int argc, char **argv)
{
	if (argc != 3 || (strcmp(argv[1], "exec") != 0 && strcmp(argv[1], "fork") != 0)) {
		fprintf(stderr, "usage: spawn exec|fork N\n");
		return 2;
	}
	int exec_mode = strcmp(argv[1], "exec") == 0;
	long n = atol(argv[2]);
	/* An instrumented parent has its store before the first fork. */
	void *volatile warm = malloc(64);
	free(warm);
	double w0 = now_ns(CLOCK_MONOTONIC), c0 = now_ns(CLOCK_PROCESS_CPUTIME_ID);
	double k0 = children_cpu_ns();
	for (long i = 0; i < n; i++) {
		pid_t pid = fork();
		if (pid < 0) {
			perror("fork");
			return 1;
		}
		if (pid == 0) {
			if (exec_mode) {
				const char *preload = getenv("SPAWN_PRELOAD");
				if (preload && setenv("LD_PRELOAD", preload, 1) != 0)
					_exit(126);
				const char *prog = getenv("SPAWN_PROGRAM");
				char *args[] = { (char *)(prog ? prog : "/bin/true"),
						 getenv("SPAWN_ARG"), NULL };
				execve(args[0], args, environ);
				_exit(127);
			}
			_exit(0);
		}
		int status;
		if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
		    WEXITSTATUS(status) != 0) {
			fprintf(stderr, "spawn: child failed\n");
			return 1;
		}
	}
	double wall = now_ns(CLOCK_MONOTONIC) - w0;
	double cpu = now_ns(CLOCK_PROCESS_CPUTIME_ID) - c0 + children_cpu_ns() - k0;
	printf("wall_ns_per_op=%.0f cpu_ns_per_op=%.0f\n", wall / n, cpu / n);
	return 0;
}
