/* SPDX-License-Identifier: MIT */
/*
 * Leaks of every kind of allocation, for LeakSanitizer (sanitizers.sh): each report's
 * stack must get through the library to the line that leaked (those that end in the
 * comment "leaks").
 */
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

__attribute__((noinline)) static void leak_all(void)
{
	char *p;
	p = malloc(11);				/* leaks */
	p[0] = 0;
	p = calloc(1, 12);			/* leaks */
	p = realloc(NULL, 13);			/* leaks */
	p[0] = 0;
	p = malloc(5);
	p = realloc(p, 14);			/* leaks */
	p = strdup("fifteen");			/* leaks */
	p = strndup("sixteen", 3);		/* leaks */
	p = aligned_alloc(64, 64);		/* leaks */
	if (posix_memalign((void **)&p, 128, 17))	/* leaks */
		abort();
	p = memalign(32, 18);			/* leaks */
	p = reallocarray(NULL, 4, 5);		/* leaks */
	if (asprintf(&p, "%d", 21) < 0)		/* leaks */
		abort();
	p = NULL;
}

int main(void)
{
	leak_all();
	return 0;
}
