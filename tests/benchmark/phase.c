/* SPDX-License-Identifier: MIT */
/*
 * One size class, then another: N1 blocks of 64 bytes filled and freed, then N2
 * blocks of 256. Prints the peak resident memory, the resident memory once the
 * second set is freed, and again after malloc_trim(0), each above the start, in KiB,
 * and the microseconds malloc_trim(0) took (with the run's time, as every benchmark).
 * Usage: phase N1 N2.
 */
#include "bench.h"
#include "../proc_status.h"

#include <malloc.h>
#include <string.h>
#include <sys/mman.h>

int main(int argc, char **argv)
{
	size_t n1 = bench_arg(argc, argv, 1, 4000000);
	size_t n2 = bench_arg(argc, argv, 2, 1000000);
	size_t n = n1 > n2 ? n1 : n2;
	void **blocks = mmap(NULL, n * sizeof(void *), PROT_READ | PROT_WRITE,
			     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (blocks == MAP_FAILED)
		abort();
	memset(blocks, 0, n * sizeof(void *));
	free(malloc(64));	/* the library's start-up */
	long start = proc_status_kb("VmRSS:");
	struct bench_mark t = bench_now();
	for (size_t i = 0; i < n1; i++)
		memset(blocks[i] = malloc(64), 1, 64);
	for (size_t i = 0; i < n1; i++)
		free(blocks[i]);
	for (size_t i = 0; i < n2; i++)
		memset(blocks[i] = malloc(256), 2, 256);
	long peak = proc_status_kb("VmHWM:");
	for (size_t i = 0; i < n2; i++)
		free(blocks[i]);
	long after_free = proc_status_kb("VmRSS:");
	uint64_t trim_start = bench_clock(CLOCK_MONOTONIC);
	malloc_trim(0);
	uint64_t trim_ns = bench_clock(CLOCK_MONOTONIC) - trim_start;
	long after_trim = proc_status_kb("VmRSS:");
	printf("peak_kb=%ld free_kb=%ld trim_kb=%ld trim_us=%llu ", peak - start,
	       after_free - start, after_trim - start, (unsigned long long)(trim_ns / 1000));
	bench_report(t, n1 + n2);
	return 0;
}
