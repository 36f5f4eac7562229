/* SPDX-License-Identifier: MIT */
/*
 * malloc/free pairs made through a wrapper of the program's own (a checked malloc, as
 * xmalloc is): what declaring it in ALLOCINFO_WRAPPERS costs per allocation.
 * Usage: wrapped SIZE ITERS.
 */
#include "bench.h"

__attribute__((noinline)) static void *bench_xmalloc(size_t n)
{
	void *p = malloc(n);
	if (!p)
		abort();
	__asm__ volatile("" ::: "memory");	/* keeps its frame: no tail call */
	return p;
}

int main(int argc, char **argv)
{
	size_t size = bench_arg(argc, argv, 1, 32);
	unsigned long iters = bench_arg(argc, argv, 2, 2000000);
	for (unsigned long i = 0; i < iters / 16; i++)	/* warm */
		free(bench_xmalloc(size));
	struct bench_mark m = bench_now();
	for (unsigned long i = 0; i < iters; i++) {
		void *p = bench_xmalloc(size);
		bench_escape(p);
		free(p);
	}
	bench_report(m, iters);
	return 0;
}
