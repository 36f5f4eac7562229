/* SPDX-License-Identifier: MIT */
/*
 * malloc/free pairs: the fast path alone. Each of T threads allocates and frees one
 * block of SIZE bytes, ITERS times. Usage: pairs SIZE THREADS ITERS
 * [realloc|own|own-realloc].
 * One operation is one pair per thread, so the two-thread speed-up is
 * 2 * t(1 thread) / t(2 threads). With `realloc`, each operation allocates as Lua
 * does, through realloc alone: realloc(NULL, SIZE), then to twice SIZE, then free.
 * With `own`, through the functions of the allocator preloaded (jemalloc's mallocx,
 * sallocx and sdallocx; tcmalloc's tc_malloc, tc_malloc_size and tc_free_sized;
 * mimalloc's mi_malloc, mi_usable_size and mi_free_size): its allocation, its size
 * and its sized free, all three routed by liballocinfo (the allocation counted).
 * With `own-realloc`, the allocator's allocation, its resize to twice SIZE
 * (jemalloc's rallocx, tcmalloc's tc_realloc, mimalloc's mi_realloc) and its free:
 * the resize counted at its call, as realloc()'s are.
 */
#include "bench.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

#define WEAK __attribute__((weak))
WEAK void *mallocx(size_t n, int flags);
WEAK size_t sallocx(const void *p, int flags);
WEAK void sdallocx(void *p, size_t n, int flags);
WEAK void *tc_malloc(size_t n);
WEAK size_t tc_malloc_size(void *p);
WEAK void tc_free_sized(void *p, size_t n);
WEAK void *rallocx(void *p, size_t n, int flags);
WEAK void *tc_realloc(void *p, size_t n);
WEAK void *mi_realloc(void *p, size_t n);
WEAK void *mi_malloc(size_t n);
WEAK size_t mi_usable_size(const void *p);
WEAK void mi_free_size(void *p, size_t n);

static size_t size;
static unsigned long iters;
static int by_realloc, by_own, by_own_realloc;
static pthread_barrier_t start_line;

/* The allocator's own functions, through the program's references to them. */
static void *own_malloc(size_t n)
{
	return mallocx ? mallocx(n, 0) : tc_malloc ? tc_malloc(n) : mi_malloc(n);
}

static size_t own_size(void *p)
{
	return mallocx ? sallocx(p, 0) : tc_malloc ? tc_malloc_size(p) : mi_usable_size(p);
}

static void own_free(void *p, size_t n)
{
	if (mallocx)
		sdallocx(p, n, 0);
	else if (tc_malloc)
		tc_free_sized(p, n);
	else
		mi_free_size(p, n);
}

static void *own_realloc(void *p, size_t n)
{
	return mallocx ? rallocx(p, n, 0) : tc_malloc ? tc_realloc(p, n) : mi_realloc(p, n);
}

/* Loops of their own: the others' instructions stay as they were. */
static void own_loop(unsigned long n)
{
	for (unsigned long i = 0; i < n; i++) {
		void *p = own_malloc(size);
		bench_escape(p);
		bench_escape((void *)own_size(p));
		own_free(p, size);
	}
}

static void own_realloc_loop(unsigned long n)
{
	for (unsigned long i = 0; i < n; i++) {
		void *p = own_malloc(size);
		bench_escape(p);
		p = own_realloc(p, 2 * size);
		bench_escape(p);
		own_free(p, 2 * size);
	}
}

static void loop(unsigned long n)
{
	if (by_own) {
		own_loop(n);
		return;
	}
	if (by_own_realloc) {
		own_realloc_loop(n);
		return;
	}
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
	by_own = argc > 4 && !strcmp(argv[4], "own");
	by_own_realloc = argc > 4 && !strcmp(argv[4], "own-realloc");
	if ((by_own || by_own_realloc) && !mallocx && !tc_malloc && !mi_malloc) {
		fprintf(stderr, "pairs %s: no jemalloc, tcmalloc or mimalloc in the process\n",
			argv[4]);
		return 1;
	}
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
