/* SPDX-License-Identifier: MIT */
/*
 * malloc/free pairs: the fast path alone. Each of T threads allocates and frees one
 * block of SIZE bytes, ITERS times. Usage: pairs SIZE THREADS ITERS [realloc].
 * One operation is one pair per thread, so the two-thread speed-up is
 * 2 * t(1 thread) / t(2 threads). With `realloc`, each operation allocates as Lua
 * does, through realloc alone: realloc(NULL, SIZE), then to twice SIZE, then free.
 */
#include "bench.h"

#include <pthread.h>
#include <string.h>

static size_t size;
static unsigned long iters;
static int by_realloc;
static pthread_barrier_t start_line;

static void loop(unsigned long n)
{
	for (unsigned long i = 0; i < n; i++) {
		void *p;
		if (by_realloc) {
			p = realloc(NULL, size);
			bench_escape(p);
			p = realloc(p, 2 * size);
		} else {
			p = malloc(size);
		}
		bench_escape(p);
		free(p);
	}
}

static void *worker(void *arg)
{
	(void)arg;
	loop(iters / 16);	/* warm: tcache, the counters' cache lines */
	pthread_barrier_wait(&start_line);
	loop(iters);
	return NULL;
}

int main(int argc, char **argv)
{
	size = bench_arg(argc, argv, 1, 32);
	unsigned long threads = bench_arg(argc, argv, 2, 1);
	iters = bench_arg(argc, argv, 3, 5000000);
	by_realloc = argc > 4 && !strcmp(argv[4], "realloc");
	pthread_t tid[64];
	if (threads > 64)
		threads = 64;
	pthread_barrier_init(&start_line, NULL, (unsigned)threads + 1);
	for (unsigned long t = 0; t < threads; t++)
		pthread_create(&tid[t], NULL, worker, NULL);
	pthread_barrier_wait(&start_line);
	struct bench_mark m = bench_now();
	for (unsigned long t = 0; t < threads; t++)
		pthread_join(tid[t], NULL);
	bench_report(m, iters);
	return 0;
}
