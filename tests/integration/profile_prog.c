/* SPDX-License-Identifier: MIT */
/*
 * The workload of the built-in heap profiler's tests (profile_*.sh): allocations of
 * known sizes from known stacks (main -> run_MODE -> work_X -> malloc, each its own
 * noinline function). Built with the header (PLAIN_BUILD: without, for LD_PRELOAD).
 * The profiler's functions are looked up with dlsym, so both builds run every mode.
 * By MODE:
 *   small       work_a keeps 100 blocks of 4096 bytes, work_b keeps 50 of 1000,
 *               work_c allocates and frees 200 of 512; then exits
 *   big         work_a keeps 4000 blocks of 300 KiB, work_b 4000 of 40 KiB, work_c
 *               4000 of 3000 bytes (about 1.4 GB of address space, little of it
 *               touched); prints "exact BYTES" (allocinfo's live total of the three
 *               sites) and exits
 *   snapshot N  "small", then allocinfo_profiler_snapshot() N times
 *   api BASE    allocinfo_pprof_profiler_start(1, BASE, 0, 0, 0), prints its result,
 *               then "small"
 *   chunks N    N times: work_d allocates and keeps 64 blocks of 16 KiB (1 MiB)
 *   timed N     work_a keeps one block, then waits until the profiler has written N
 *               snapshots (ALLOCINFO_PROFILE's BASE.PID.0.pb.gz to N-1), at most 30 s;
 *               prints the seconds that took
 *   fork        "small", then fork; the child allocates work_b's blocks again and
 *               exits; the parent waits
 *   threads N   N threads, each allocating and freeing 200 blocks of 1000 bytes in
 *               work_b, keeping 10, and calling allocinfo_profiler_snapshot() twice
 *               meanwhile; prints "joined"
 *   hold FIFO   "small", allocinfo_profiler_snapshot(), prints "pid PID", then blocks
 *               opening FIFO for reading until the test opens it for writing
 */
#ifndef PLAIN_BUILD
#include <allocinfo.h>
#endif

#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))

static void *volatile sink;

static void set_sink(void *p)
{
	__atomic_store_n(&sink, p, __ATOMIC_RELAXED);
}

/* Keeps a block live to the end (and out of the optimizer's reach). */
static void keep(void *p)
{
	static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	static void **kept;
	static size_t n, cap;
	pthread_mutex_lock(&lock);
	if (n == cap) {
		cap = cap ? cap * 2 : 1024;
		kept = (void **)realloc(kept, cap * sizeof(*kept));
	}
	kept[n++] = p;
	pthread_mutex_unlock(&lock);
	set_sink(p);
}

NOINLINE void work_a(int n, size_t size)
{
	for (int i = 0; i < n; i++)
		keep(malloc(size));
	__asm__ volatile("" ::: "memory");
}

NOINLINE void work_b(int n, size_t size)
{
	for (int i = 0; i < n; i++)
		keep(malloc(size));
	__asm__ volatile("" ::: "memory");
}

NOINLINE void work_c(int n, size_t size, int keep_them)
{
	for (int i = 0; i < n; i++) {
		void *p = malloc(size);
		set_sink(p);
		if (keep_them)
			keep(p);
		else
			free(p);
	}
	__asm__ volatile("" ::: "memory");
}

NOINLINE void work_d(int n, size_t size)
{
	for (int i = 0; i < n; i++)
		keep(malloc(size));
	__asm__ volatile("" ::: "memory");
}

NOINLINE void run_small(void)
{
	work_a(100, 4096);
	work_b(50, 1000);
	work_c(200, 512, 0);
	__asm__ volatile("" ::: "memory");
}

typedef int (*tag_info_fn)(unsigned, void *, long long *, long long *);

/* allocinfo's exact live bytes of the sites that allocated p's kind: summed over
 * every tag whose live blocks are 300 KiB, 40 KiB or 3000 bytes on average. */
static long long exact_total(void)
{
	tag_info_fn info = (tag_info_fn)dlsym(RTLD_DEFAULT, "allocinfo_tag_info");
	long long sum = 0, bytes, count;
	if (!info)
		return -1;
	for (unsigned tag = 2; info(tag, NULL, &bytes, &count) == 0; tag++)
		if (count > 0 && (bytes / count == 300 * 1024 || bytes / count == 40 * 1024 ||
				  bytes / count == 3000))
			sum += bytes;
	return sum;
}

NOINLINE void run_big(void)
{
	work_a(4000, 300 * 1024);
	work_b(4000, 40 * 1024);
	work_c(4000, 3000, 1);
	printf("exact %lld\n", exact_total());
	fflush(stdout);
}

static void snapshot(void)
{
	int (*fn)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "allocinfo_profiler_snapshot");
	printf("snapshot %d\n", fn ? fn() : -1000);
}

static void *thread_work(void *arg)
{
	(void)arg;
	for (int i = 0; i < 200; i++) {
		void *p = malloc(1000);
		set_sink(p);
		if (i % 20 == 0) {
			work_b(1, 1000);
		}
		free(p);
		if (i == 50 || i == 150)
			snapshot();
	}
	return NULL;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "small";
	const char *arg = argc > 2 ? argv[2] : "1";
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (strcmp(mode, "small") == 0) {
		run_small();
	} else if (strcmp(mode, "big") == 0) {
		run_big();
	} else if (strcmp(mode, "snapshot") == 0) {
		run_small();
		for (int i = atoi(arg); i > 0; i--)
			snapshot();
	} else if (strcmp(mode, "api") == 0) {
		int (*start)(size_t, const char *, size_t, size_t, double) =
			(int (*)(size_t, const char *, size_t, size_t, double))
				dlsym(RTLD_DEFAULT, "allocinfo_pprof_profiler_start");
		printf("start %d\n", start ? start(1, arg, 0, 0, 0) : -1000);
		run_small();
	} else if (strcmp(mode, "chunks") == 0) {
		for (int i = atoi(arg); i > 0; i--)
			work_d(64, 16 * 1024);
	} else if (strcmp(mode, "timed") == 0) {
		/* Waits for the files rather than for a time: a snapshot thread that a
		 * loaded machine runs late still yields them all. */
		struct timespec start, now, tick = { 0, 10 * 1000 * 1000 };
		clock_gettime(CLOCK_MONOTONIC, &start);
		work_a(1, 100);
		char last[4096];
		snprintf(last, sizeof(last), "%s.%d.%d.pb.gz", getenv("ALLOCINFO_PROFILE"),
			 (int)getpid(), atoi(arg) - 1);
		double waited;
		do {
			nanosleep(&tick, NULL);
			clock_gettime(CLOCK_MONOTONIC, &now);
			waited = (double)(now.tv_sec - start.tv_sec) +
				 (double)(now.tv_nsec - start.tv_nsec) / 1e9;
		} while (access(last, F_OK) != 0 && waited < 30);
		printf("waited %.2f\n", waited);
	} else if (strcmp(mode, "fork") == 0) {
		run_small();
		pid_t pid = fork();
		if (pid == 0) {
			work_b(50, 1000);
			exit(0);
		}
		int status;
		waitpid(pid, &status, 0);
		printf("child %d\n", (int)pid);
	} else if (strcmp(mode, "threads") == 0) {
		pthread_t t[16];
		int n = atoi(arg);
		n = n < 1 ? 1 : n > 16 ? 16 : n;
		for (int i = 0; i < n; i++)
			pthread_create(&t[i], NULL, thread_work, NULL);
		for (int i = 0; i < n; i++)
			pthread_join(t[i], NULL);
		printf("joined\n");
	} else if (strcmp(mode, "hold") == 0) {
		run_small();
		snapshot();
		printf("pid %d\n", (int)getpid());
		int fd = open(arg, O_RDONLY);
		if (fd >= 0)
			close(fd);
	} else {
		fprintf(stderr, "unknown mode %s\n", mode);
		return 2;
	}
	return 0;
}
