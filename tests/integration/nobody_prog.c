/* SPDX-License-Identifier: MIT */
/*
 * A program of an unprivileged user, for the tests of readers facing other users'
 * stores: built at test time (without debug information, with hostile debug links,
 * execute-only) and run as nobody under LD_PRELOAD. Its two allocations come from
 * hold() and are charged to a caller tag of its own; it writes its pid to the file
 * given and waits to be killed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

__attribute__((noinline)) void *hold(size_t n)
{
	void *p = malloc(n);
	__asm__ volatile("" : : "r"(p) : "memory");	/* a call, not a tail call */
	return p;
}

int main(int argc, char **argv)
{
	void *a = hold(1000), *b = hold(2000);
	char tmp[4096];

	if (argc != 2)
		return 2;
	snprintf(tmp, sizeof(tmp), "%s.tmp", argv[1]);
	FILE *f = fopen(tmp, "w");
	if (!f || fprintf(f, "%d\n", (int)getpid()) < 0 || fclose(f) != 0 || rename(tmp, argv[1]))
		return 1;
	for (;;)
		pause();
	free(a);
	free(b);
	return 0;
}
