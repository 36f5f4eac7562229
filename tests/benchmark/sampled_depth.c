/* SPDX-License-Identifier: MIT */
/*
 * The cost of one sampled allocation and its stack: DEPTH nested calls (built with
 * frame pointers), then ITERS malloc/free pairs of 64 bytes, every one sampled by a
 * profiler that does nothing (rate 1), or with none attached ("off").
 * Usage: sampled_depth DEPTH ITERS [off]. Run with ALLOCINFO_PROFILE_UNWIND=unwind or fp.
 */
#include "bench.h"

#include <string.h>

static unsigned long iters;

static size_t on_alloc(void *arg, const struct allocinfo_sample *s)
{
	(void)arg;
	(void)s;
	return 0;
}

__attribute__((noinline)) static void pairs(unsigned long n)
{
	for (unsigned long i = 0; i < n; i++) {
		void *p = malloc(64);
		bench_escape(p);
		free(p);
	}
}

__attribute__((noinline)) static int nest(int depth, struct bench_mark *m)
{
	if (depth > 0) {
		int r = nest(depth - 1, m);
		bench_escape(&r);
		return r;
	}
	pairs(iters / 16);	/* warm */
	*m = bench_now();
	pairs(iters);
	return 0;
}

int main(int argc, char **argv)
{
	int depth = (int)bench_arg(argc, argv, 1, 20);
	iters = bench_arg(argc, argv, 2, 200000);
	if (argc <= 3 || strcmp(argv[3], "off") != 0) {
		struct allocinfo_profiler p = { 0 };
		p.sample_data_size = 16;
		p.initial_sample_rate = 1;
		p.on_alloc = on_alloc;
		if (allocinfo_profiler_attach(&p, NULL) || allocinfo_profiler_start())
			return 1;
	}
	struct bench_mark m;
	nest(depth, &m);
	bench_report(m, iters);
	return 0;
}
