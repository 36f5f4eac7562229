/* SPDX-License-Identifier: MIT */
/*
 * The program the example callback libraries are tried on (callbacks.sh), built
 * twice: with allocinfo.h and the library, and without either (for LD_PRELOAD).
 * Usage: callbacks_prog large|overflow|threads; prints the lines of its calls.
 */
#define _GNU_SOURCE
#ifndef PLAIN_BUILD
#include <allocinfo.h>
#endif

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Keeps the compiler from removing a malloc and free whose block is unused. */
#define ESCAPE(p) __asm__ volatile("" : : "r"(p) : "memory")

static int large(void)
{
	int l1 = __LINE__ + 1;
	char *a = malloc(100000);
	int l2 = __LINE__ + 1;
	char *b = calloc(1000, 200);
	char *c = malloc(10);	/* below the threshold */
	ESCAPE(a);
	ESCAPE(b);
	ESCAPE(c);
	printf("%d %d\n", l1, l2);
	free(a);
	free(b);
	free(c);
	return 0;
}

static int overflow(void)
{
	int l1 = __LINE__ + 1;
	char *p = malloc(100);
	char *q = malloc(50);
	memset(p, 0, 101);	/* one byte too many */
	memset(q, 0, 50);
	q = realloc(q, 70);
	memset(q, 0, 70);
	ESCAPE(p);
	ESCAPE(q);
	free(p);	/* reported */
	free(q);	/* not */
	printf("%d\n", l1);
	return 0;
}

static void *worker(void *arg)
{
	(void)arg;
	void *blocks[10];
	pthread_setname_np(pthread_self(), "worker");
	for (int i = 0; i < 10; i++) {
		blocks[i] = malloc(100);
		ESCAPE(blocks[i]);
	}
	blocks[0] = realloc(blocks[0], 500);
	ESCAPE(blocks[0]);
	for (int i = 0; i < 10; i++)
		free(blocks[i]);
	return NULL;
}

static int threads(void)
{
	pthread_t t;
	if (pthread_create(&t, NULL, worker, NULL) != 0)
		return 1;
	pthread_join(t, NULL);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 2 && strcmp(argv[1], "large") == 0)
		return large();
	if (argc == 2 && strcmp(argv[1], "overflow") == 0)
		return overflow();
	if (argc == 2 && strcmp(argv[1], "threads") == 0)
		return threads();
	fprintf(stderr, "usage: callbacks_prog large|overflow|threads\n");
	return 2;
}
