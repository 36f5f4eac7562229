/* SPDX-License-Identifier: MIT */
/*
 * An instrumented program for the allocinfod tests. It holds known allocations at
 * known lines (found by the tests through the "site:" markers) until SIGTERM, or
 * allocates and frees as fast as it can. Built twice (daemon_hold, daemon_hold_b),
 * so that the tests have two programs with the same call sites in different modules.
 *
 *   daemon_hold hold K   K (up to 64) blocks of 1000 bytes, a 1024-byte table, a 13-byte name
 *   daemon_hold churn    malloc/free in a loop
 *
 * Once ready it writes "ready PID FILE" on stdout (FILE as the tags name it), then
 * waits. It exits on SIGTERM or SIGINT, freeing everything, and on its own after
 * 120 seconds so that it never outlives a broken test. It uses no stdio: its only
 * allocations are its own.
 */
#include <allocinfo.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define LIFETIME 120

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static void say_ready(void)
{
	char line[512];
	int n = snprintf(line, sizeof(line), "ready %d %s\n", (int)getpid(), __FILE__);
	if (n > 0 && write(1, line, (size_t)n) != n)
		_exit(3);
}

static void wait_for_signal(void)
{
	sigset_t none;
	sigemptyset(&none);
	while (!stop)
		sigsuspend(&none);
}

static int hold(int k)
{
	static void *blocks[64];
	char *table, *name;
	int i;

	if (k < 0 || k > 64)
		return 2;
	for (i = 0; i < k; i++)
		blocks[i] = malloc(1000);		/* site:blocks */
	table = calloc(16, 64);				/* site:table */
	name = strdup("hold-process");			/* site:name */
	if (!table || !name)
		return 1;
	say_ready();
	wait_for_signal();
	for (i = 0; i < k; i++)
		free(blocks[i]);
	free(table);
	free(name);
	return 0;
}

static int churn(void)
{
	void *keep[64] = {0};
	unsigned x = (unsigned)getpid();
	unsigned long n;

	say_ready();
	for (n = 0; !stop; n++) {
		x = x * 1103515245u + 12345u;
		unsigned slot = (x >> 8) % 64;
		free(keep[slot]);
		if (x & 0x10000)
			keep[slot] = malloc(1 + (x >> 20) % 512);	/* site:churn_a */
		else
			keep[slot] = calloc(1, 1 + (x >> 20) % 256);	/* site:churn_b */
	}
	for (n = 0; n < 64; n++)
		free(keep[n]);
	return 0;
}

int main(int argc, char **argv)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGALRM, &sa, NULL);
	alarm(LIFETIME);

	if (argc == 3 && strcmp(argv[1], "hold") == 0)
		return hold(atoi(argv[2]));
	if (argc == 2 && strcmp(argv[1], "churn") == 0)
		return churn();
	static const char usage[] = "usage: daemon_hold hold K (0..64) | churn\n";
	(void)!write(2, usage, sizeof(usage) - 1);
	return 2;
}
