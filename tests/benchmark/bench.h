/* SPDX-License-Identifier: MIT */
/*
 * Helpers shared by the benchmark programs: clocks, argument parsing and the one
 * result line each program prints for bench.sh to read.
 *
 * Every program is built twice from the same source: with allocinfo.h (linked with
 * the library) and with -DALLOCINFO_DISABLE (the plain baseline, no library). The
 * header is included here, first, so the allocation calls below it are tagged.
 */
#ifndef ALLOCINFO_BENCH_H
#define ALLOCINFO_BENCH_H

#include <allocinfo.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>

#ifdef __cplusplus
extern "C" {
#endif

static inline uint64_t bench_clock(clockid_t id)
{
	struct timespec ts;
	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Wall time and the CPU time of the whole process, taken together. */
struct bench_mark {
	uint64_t wall, cpu;
};

static inline struct bench_mark bench_now(void)
{
	struct bench_mark m;
	m.wall = bench_clock(CLOCK_MONOTONIC);
	m.cpu = bench_clock(CLOCK_PROCESS_CPUTIME_ID);
	return m;
}

/*
 * The result line: nanoseconds per operation, wall and CPU, and the process's peak
 * resident memory in KiB. bench.sh compares per-operation times, so a run with fewer
 * operations (under heaptrack) is still comparable with the baseline.
 */
static inline void bench_report(struct bench_mark start, uint64_t ops)
{
	struct bench_mark end = bench_now();
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	printf("wall_ns_per_op=%.4f cpu_ns_per_op=%.4f ops=%llu peak_rss_kb=%ld\n",
	       (double)(end.wall - start.wall) / (double)ops,
	       (double)(end.cpu - start.cpu) / (double)ops, (unsigned long long)ops,
	       ru.ru_maxrss);
	fflush(stdout);
}

/* argv[i] as a positive count, or the default. */
static inline unsigned long bench_arg(int argc, char **argv, int i, unsigned long def)
{
	if (argc <= i)
		return def;
	char *end;
	unsigned long v = strtoul(argv[i], &end, 10);
	if (*end || v == 0) {
		fprintf(stderr, "bad argument '%s'\n", argv[i]);
		exit(2);
	}
	return v;
}

/* Keeps the compiler from removing an allocation whose result is never read. */
static inline void bench_escape(void *p)
{
	__asm__ volatile("" : : "g"(p) : "memory");
}

#ifdef __cplusplus
}
#endif

#endif
