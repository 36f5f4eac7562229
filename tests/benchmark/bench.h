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

#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

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
 * BENCH_RSS_POLL_MS=N: a thread reads the process's resident memory every N
 * milliseconds, and the result line gives the largest reading (polled_peak_kb). The
 * kernel's own maximum (getrusage, VmHWM, GNU time's %M) is taken from its per-CPU
 * RSS counters without their CPUs' pending parts (Linux 6.2 on), at the moments it
 * happens to look: on these workloads it reads up to 400 KiB off, as much as the 5%
 * the peak targets allow. /proc/self/statm adds the parts up, so each reading
 * is exact; the largest of many is within a poll of the true peak. The reading
 * allocates nothing (a descriptor opened once, pread into the stack), so it does not
 * move the heap it measures; the thread's few pages count in every variant alike.
 */
static int bench_statm_fd = -1;
static long bench_polled_peak_kb;	/* atomic */

static inline long bench_rss_kb(void)
{
	char buf[128];
	ssize_t n = pread(bench_statm_fd, buf, sizeof(buf) - 1, 0);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	char *p = buf;
	while (*p && *p != ' ')	/* the first field is the virtual size */
		p++;
	return (long)strtoul(p, NULL, 10) * (sysconf(_SC_PAGESIZE) / 1024);
}

static inline void bench_rss_sample(void)
{
	long kb = bench_rss_kb(), was = __atomic_load_n(&bench_polled_peak_kb, __ATOMIC_RELAXED);
	while (kb > was && !__atomic_compare_exchange_n(&bench_polled_peak_kb, &was, kb, 0,
						       __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		;
}

static void *bench_rss_poller(void *arg)
{
	struct timespec gap = { 0, (long)(uintptr_t)arg * 1000000 };
	for (;;) {
		bench_rss_sample();
		nanosleep(&gap, NULL);
	}
	return NULL;
}

__attribute__((constructor)) static void bench_rss_poll_start(void)
{
	const char *s = getenv("BENCH_RSS_POLL_MS");
	long ms = s ? strtol(s, NULL, 10) : 0;
	if (ms <= 0 || ms > 999)
		return;
	bench_statm_fd = open("/proc/self/statm", O_RDONLY | O_CLOEXEC);
	if (bench_statm_fd < 0)
		return;
	pthread_attr_t attr;
	pthread_t t;
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&attr, 64 << 10);
	if (pthread_create(&t, &attr, bench_rss_poller, (void *)(uintptr_t)ms) != 0) {
		close(bench_statm_fd);
		bench_statm_fd = -1;
	}
	pthread_attr_destroy(&attr);
}

/*
 * The result line: nanoseconds per operation, wall and CPU, and the process's peak
 * resident memory in KiB (the kernel's; and the polled one, when polled). bench.sh
 * compares per-operation times, so a run with fewer operations (under heaptrack) is
 * still comparable with the baseline.
 */
static inline void bench_report(struct bench_mark start, uint64_t ops)
{
	struct bench_mark end = bench_now();
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	printf("wall_ns_per_op=%.4f cpu_ns_per_op=%.4f ops=%llu peak_rss_kb=%ld",
	       (double)(end.wall - start.wall) / (double)ops,
	       (double)(end.cpu - start.cpu) / (double)ops, (unsigned long long)ops,
	       ru.ru_maxrss);
	if (bench_statm_fd >= 0) {
		bench_rss_sample();
		printf(" polled_peak_kb=%ld", __atomic_load_n(&bench_polled_peak_kb, __ATOMIC_RELAXED));
	}
	printf("\n");
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
