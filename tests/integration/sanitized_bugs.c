/* SPDX-License-Identifier: MIT */
/*
 * One bug each, for the sanitizer that finds it (sanitizers.sh): a write one past a
 * block's end, a write after free and a double free (AddressSanitizer), a data race on
 * a block (ThreadSanitizer). Each report must name the line that made the block (the
 * one that ends in the comment "made") and the lines of its bug (those that end in its
 * name).
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

static char *shared;

static void *racer(void *arg)
{
	(void)arg;
	shared[1] = 1;				/* race */
	return NULL;
}

int main(int argc, char **argv)
{
	const char *what = argc > 1 ? argv[1] : "";
	volatile char *p = malloc(10);		/* made */
	if (!strcmp(what, "overflow")) {
		p[10] = 1;			/* overflow */
	} else if (!strcmp(what, "use-after-free")) {
		free((void *)p);
		p[0] = 1;			/* use-after-free */
	} else if (!strcmp(what, "double-free")) {
		free((void *)p);		/* double-free */
		free((void *)p);		/* double-free */
	} else if (!strcmp(what, "race")) {
		shared = (char *)p;
		pthread_t t;
		pthread_create(&t, NULL, racer, NULL);
		shared[1] = 2;			/* race */
		pthread_join(t, NULL);
	}
	return 0;
}
