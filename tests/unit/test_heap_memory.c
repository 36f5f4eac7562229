/* SPDX-License-Identifier: MIT */
/*
 * The small-block heap's memory against glibc's, each measured here in a child of the
 * same shape (this program run again, with the heap or with ALLOCINFO=never):
 *  - a phase change (one class filled and freed, then another) peaks within 10% of
 *    glibc: freed spans serve the other class, also when the first class was freed
 *    in an order of its own, so that the slots the caches keep back lie in every
 *    one of its spans;
 *  - memory glibc holds free (a hole below its arena's top) goes back to the system
 *    as the heap grows, and as large blocks are freed, so the two heaps together
 *    stay near glibc alone; the top glibc keeps for its next blocks stays, and
 *    blocks glibc maps on their own make no trim;
 *  - after free and malloc_trim(0) the resident memory is within 5 MB of glibc's;
 *    without malloc_trim, empty spans go back once they have been empty a while, and
 *    a while twice as long once spans purged were taken again at once;
 *  - a span emptied and purged is handed out again, to another class and zeroed;
 *  - spans move between threads: blocks one thread allocated, another freed, serve
 *    a third thread's other class, and a forked child's;
 *  - with RLIMIT_AS lowered at run time to 512 MiB, malloc manages about as many
 *    blocks as glibc does;
 *  - mallinfo2 counts the heap's blocks as glibc counts its chunks, next to the
 *    report's exact total;
 *  - posix_memalign(4096, 64) takes a page a block, as in glibc, with glibc's usable
 *    size, counted exactly.
 */
#include <allocinfo.h>

#include <malloc.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "../proc_status.h"

#include "site_report.h"
#include "spawn_self.h"

static void need_heap(void)
{
	const char *san = getenv("ALLOCINFO_SANITIZER");
	if (san && strcmp(san, "no"))
		skip();
	assert_int_equal(allocinfo__inline_v1.small_max, 1032);
}

static int m_line;
static void *m_block(size_t n)
{
	m_line = __LINE__ + 1;
	return malloc(n);
}

/* ---- the children ------------------------------------------------------------------ */

enum { PHASE1 = 1000000, PHASE2 = 250000 };
static void *blocks[PHASE1];

/*
 * n1 blocks of size1 bytes filled, then freed, block i * stride mod n1 i-th; then n2
 * blocks of size2 filled. Prints the peak's growth over the start, in KiB, and checks
 * that the second phase is counted exactly.
 */
static int phase_change(int n1, size_t size1, long stride, int n2, size_t size2)
{
	long start = proc_status_kb("VmRSS:");
	for (int i = 0; i < n1; i++)
		memset(blocks[i] = m_block(size1), 1, size1);
	for (int i = 0; i < n1; i++)
		free(blocks[(int)(i * stride % n1)]);
	for (int i = 0; i < n2; i++)
		memset(blocks[i] = m_block(size2), 2, size2);
	long peak = proc_status_kb("VmHWM:");
	if (getenv("ALLOCINFO") == NULL) {
		struct site_counts c = site_lookup(__FILE__, m_line, "m_block");
		if (c.bytes != (long long)(size2 * n2) || c.calls != (unsigned long long)n2)
			return 1;
	}
	for (int i = 0; i < n2; i++)
		free(blocks[i]);
	fprintf(stderr, "%ld\n", peak - start);
	return 0;
}

/* The program at a quarter of its size: 1M blocks of 64 bytes filled and
 * freed in order, then 250k of 256. */
static int child_phase_change(void)
{
	return phase_change(PHASE1, 64, 1, PHASE2, 256);
}

/* The same with the first class freed in another order than it was allocated (as a
 * tree is torn down): 40k blocks of 88 bytes, then 80k of 40 (the same memory).
 * i * 7919 mod 40000 visits every block once: 7919 is prime, and no factor of 40000. */
static int child_scattered_phase(void)
{
	return phase_change(40000, 88, 7919, 80000, 40);
}

/* 200 MB of blocks of every small size, all freed: the resident memory's growth over
 * the start after malloc_trim(0), in KiB. */
enum { TRIM_BLOCKS = 400000 };
static void allocate_mixed(int n)
{
	for (int i = 0; i < n; i++) {
		size_t size = 16 + (size_t)(i * 37) % 1000;
		memset(blocks[i] = m_block(size), 3, size);
	}
}

static void free_all(int n)
{
	for (int i = 0; i < n; i++)
		free(blocks[i]);
}

static int child_trim(void)
{
	long start = proc_status_kb("VmRSS:");
	allocate_mixed(TRIM_BLOCKS);
	free_all(TRIM_BLOCKS);
	malloc_trim(0);
	fprintf(stderr, "%ld\n", proc_status_kb("VmRSS:") - start);
	return 0;
}

/* 8 MiB of glibc's blocks of 64 KiB freed, less the last one, which keeps the hole
 * they leave below the top of glibc's arena (glibc trims only its top); then 8 MiB
 * of small blocks. glibc alone serves them from the hole; the heap takes new spans,
 * and as it does glibc gives the hole's pages back. Prints the growth from the hole
 * to the end, in KiB. */
enum { HOLE_BLOCKS = 128, HOLE_SIZE = 65536, FILL_SIZE = 256 };
static int child_glibc_hole(void)
{
	void *big[HOLE_BLOCKS];
	for (int i = 0; i < HOLE_BLOCKS; i++)
		memset(big[i] = m_block(HOLE_SIZE), 5, HOLE_SIZE);
	for (int i = 0; i < HOLE_BLOCKS - 1; i++)
		free(big[i]);
	long hole = proc_status_kb("VmRSS:");
	const int n = HOLE_BLOCKS * HOLE_SIZE / FILL_SIZE;
	for (int i = 0; i < n; i++)
		memset(blocks[i] = m_block(FILL_SIZE), 6, FILL_SIZE);
	long end = proc_status_kb("VmRSS:");
	if (getenv("ALLOCINFO") == NULL) {
		struct site_counts c = site_lookup(__FILE__, m_line, "m_block");
		if (c.bytes != (long long)FILL_SIZE * n + HOLE_SIZE ||
		    c.calls != (unsigned long long)n + 1)
			return 1;
	}
	free_all(n);
	free(big[HOLE_BLOCKS - 1]);
	fprintf(stderr, "%ld\n", end - hole);
	return 0;
}

/* 8 MiB of small blocks made and freed: their spans stay, empty. Then 8 MiB of
 * glibc's blocks of 64 KiB freed, less the last one, leaving a hole; then the small
 * blocks again, into the spans. The heap does not grow this time: only the large
 * frees can make glibc give the hole back. glibc alone serves the second small
 * blocks from the hole. Prints the growth over the start, in KiB. */
static int child_hole_after_spans(void)
{
	long start = proc_status_kb("VmRSS:");
	const int n = HOLE_BLOCKS * HOLE_SIZE / FILL_SIZE;
	for (int i = 0; i < n; i++)
		memset(blocks[i] = malloc(FILL_SIZE), 6, FILL_SIZE);
	free_all(n);
	void *big[HOLE_BLOCKS];
	for (int i = 0; i < HOLE_BLOCKS; i++)
		memset(big[i] = malloc(HOLE_SIZE), 5, HOLE_SIZE);
	for (int i = 0; i < HOLE_BLOCKS - 1; i++)
		free(big[i]);
	for (int i = 0; i < n; i++)
		memset(blocks[i] = m_block(FILL_SIZE), 6, FILL_SIZE);
	long end = proc_status_kb("VmRSS:");
	if (getenv("ALLOCINFO") == NULL) {
		struct site_counts c = site_lookup(__FILE__, m_line, "m_block");
		if (c.bytes != (long long)FILL_SIZE * n || c.calls != (unsigned long long)n)
			return 1;
	}
	free_all(n);
	free(big[HOLE_BLOCKS - 1]);
	fprintf(stderr, "%ld\n", end - start);
	return 0;
}

/* The minor page faults of this process so far. */
static long minor_faults(void)
{
	struct rusage r;
	getrusage(RUSAGE_SELF, &r);
	return r.ru_minflt;
}

/* The shape of expat's test suite: buffers of 96 KiB made at glibc's top, filled and
 * freed again and again, with small blocks in between. glibc keeps its top up to its
 * trim threshold (2 MiB here: it rises to twice the largest block it has mapped and
 * freed) and serves the next buffers from it; the trims the frees make due give back
 * only the holes below the top, so no page is faulted in again. Prints the minor
 * faults of the rounds. */
enum { CHURN_ROUNDS = 300, CHURN_BUFFERS = 4, CHURN_SIZE = 96 << 10, CHURN_SMALL = 2000 };
static int child_buffer_churn(void)
{
	free(memset(malloc(1 << 20), 1, 1 << 20));	/* mapped: the threshold rises */
	long faults = minor_faults();
	for (int round = 0; round < CHURN_ROUNDS; round++) {
		char *buffer[CHURN_BUFFERS];
		for (int i = 0; i < CHURN_BUFFERS; i++)
			memset(buffer[i] = m_block(CHURN_SIZE), round, CHURN_SIZE);
		for (int i = 0; i < CHURN_BUFFERS; i++)
			free(buffer[i]);
		for (int i = 0; i < CHURN_SMALL; i++)	/* refills, where trims are made */
			memset(blocks[i] = m_block(FILL_SIZE), 6, FILL_SIZE);
		free_all(CHURN_SMALL);
	}
	fprintf(stderr, "%ld\n", minor_faults() - faults);
	return 0;
}

/* What malloc_info() writes (null if it cannot be had); the caller frees it. */
static char *malloc_info_doc(void)
{
	char *doc = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&doc, &len);
	if (!f)
		return NULL;
	malloc_info(0, f);
	fclose(f);
	return doc;
}

/* The heap's trims as malloc_info() reports them: made, spaced out, and the
 * microseconds they took. */
struct trims {
	unsigned long long done, spaced, us;
};
static struct trims heap_trims(void)
{
	struct trims t = { ~0ull, ~0ull, ~0ull };
	char *doc = malloc_info_doc();
	const char *at = doc ? strstr(doc, "<glibc-trims ") : NULL;
	if (at && sscanf(at, "<glibc-trims done=\"%llu\" spaced-out=\"%llu\" time-us=\"%llu\"",
			 &t.done, &t.spaced, &t.us) != 3)
		t.done = t.spaced = t.us = ~0ull;
	free(doc);
	return t;
}

static long long monotonic_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* glibc with 50,000 free chunks it cannot merge (every other block of 1040 bytes
 * freed), which its malloc_trim walks each time: then 64 MiB of small blocks, a trim
 * due every MiB. Prints the trims made, spaced out and their microseconds while they
 * were allocated, and how long that took. */
enum { FRAG_BIG = 100000, FRAG_SMALL = 1000000 };
static int child_fragmented_glibc(void)
{
	static void *big[FRAG_BIG];
	for (int i = 0; i < FRAG_BIG; i++)
		memset(big[i] = m_block(1040), 7, 1040);
	for (int i = 0; i < FRAG_BIG; i += 2)
		free(big[i]);
	struct trims t0 = heap_trims();
	long long start = monotonic_us();
	for (int i = 0; i < FRAG_SMALL; i++)
		memset(blocks[i] = m_block(64), 8, 64);
	long long took = monotonic_us() - start;
	struct trims t = heap_trims();
	free_all(FRAG_SMALL);
	for (int i = 1; i < FRAG_BIG; i += 2)
		free(big[i]);
	fprintf(stderr, "%llu %llu %llu %lld\n", t.done - t0.done, t.spaced - t0.spaced,
		t.us - t0.us, took);
	return 0;
}

/* Blocks of 40 MiB, above glibc's largest mmap threshold: each is mapped on its own
 * and unmapped as it is freed, leaving no hole, so their frees make no trim due (they
 * did, one for each 256 KiB). Prints the trims requested meanwhile. */
enum { MAPPED_BLOCKS = 8, MAPPED_SIZE = 40 << 20 };
static int child_mapped_frees(void)
{
	struct trims t0 = heap_trims();
	for (int i = 0; i < MAPPED_BLOCKS; i++) {
		free(m_block(MAPPED_SIZE));
		for (int j = 0; j < CHURN_SMALL; j++)	/* refills, where trims are made */
			blocks[j] = m_block(FILL_SIZE);
		free_all(CHURN_SMALL);
	}
	struct trims t = heap_trims();
	fprintf(stderr, "%llu\n", t.done - t0.done + t.spaced - t0.spaced);
	return 0;
}

/* Without malloc_trim: once the spans have been empty a while, the next span handed
 * out (here to a class not used yet) gives the others back. */
static int child_delayed_purge(void)
{
	long start = proc_status_kb("VmRSS:");
	allocate_mixed(TRIM_BLOCKS / 2);
	long full = proc_status_kb("VmRSS:");
	free_all(TRIM_BLOCKS / 2);
	nanosleep(&(struct timespec){ 0, 700 * 1000 * 1000 }, NULL);
	allocate_mixed(2000);	/* refills and flushes */
	free_all(2000);
	fprintf(stderr, "%ld %ld\n", full - start, proc_status_kb("VmRSS:") - start);
	return 0;
}

/* The purge delay and its regrets as malloc_info() reports them (0 if it cannot be
 * read). */
struct purge_figures {
	unsigned delay_ms;
	unsigned long long regrets;
};
static struct purge_figures heap_purge(void)
{
	struct purge_figures p = { 0, 0 };
	char *doc = malloc_info_doc();
	const char *at = doc ? strstr(doc, "<purge ") : NULL;
	if (!at || sscanf(at, "<purge delay-ms=\"%u\" regrets=\"%llu\"", &p.delay_ms,
			  &p.regrets) != 2)
		p.delay_ms = 0;
	free(doc);
	return p;
}

static void sleep_ms(long ms)
{
	nanosleep(&(struct timespec){ ms / 1000, ms % 1000 * 1000 * 1000 }, NULL);
}

/* A program whose phases come round more slowly than the purge delay: its spans,
 * purged while it waited, are taken again at once. That regret doubles the delay, and
 * spans freed then wait out the longer delay: still resident at 0.7 of it after they
 * were freed, given back at 1.3 of it. Prints the delay before and after the regret,
 * whether there were regrets, the resident growth with the spans freed, at 0.7 and at
 * 1.3 of the delay, and the milliseconds from the free to the reading at 0.7 (on a
 * busy machine it can come too late to show anything). */
static int child_purge_regret(void)
{
	long start = proc_status_kb("VmRSS:");
	struct purge_figures before = heap_purge();
	allocate_mixed(TRIM_BLOCKS / 2);
	free_all(TRIM_BLOCKS / 2);
	sleep_ms(before.delay_ms * 7 / 5);
	allocate_mixed(TRIM_BLOCKS / 2);	/* purges them, then takes them again */
	struct purge_figures after = heap_purge();
	free_all(TRIM_BLOCKS / 2);
	long long freed_at = monotonic_us();
	long freed = proc_status_kb("VmRSS:");
	sleep_ms(after.delay_ms * 7 / 10);
	allocate_mixed(2000);	/* the pool used: nothing old enough to purge */
	free_all(2000);
	long kept = proc_status_kb("VmRSS:");
	long long kept_ms = (monotonic_us() - freed_at) / 1000;
	sleep_ms(after.delay_ms * 6 / 10);
	allocate_mixed(2000);	/* now it is */
	free_all(2000);
	long gone = proc_status_kb("VmRSS:");
	fprintf(stderr, "%u %u %d %ld %ld %ld %lld\n", before.delay_ms, after.delay_ms,
		after.regrets > 0, freed - start, kept - start, gone - start, kept_ms);
	return 0;
}

/* Blocks of 1000 bytes filled and freed, the spans purged: blocks of 500 bytes then
 * come from purged spans (the last ones purged first), those spans among them, and
 * read as zero where the 1000-byte blocks were filled. */
enum { REUSE_BLOCKS = 300, REUSE_MAX = 20000 };
static int child_purged_span_reused(void)
{
	uintptr_t lo = UINTPTR_MAX, hi = 0;
	/* Read once first: the first allocation inside the C library (fopen's) makes the
	 * library look at it and at the callers' objects (wrappers, identity.md), memory
	 * that must not fall between the two readings below. */
	(void)proc_status_kb("VmRSS:");
	for (int i = 0; i < REUSE_BLOCKS; i++) {
		blocks[i] = m_block(1000);
		memset(blocks[i], 0xab, 1000);
		uintptr_t a = (uintptr_t)blocks[i];
		lo = a < lo ? a : lo;
		hi = a > hi ? a : hi;
	}
	free_all(REUSE_BLOCKS);
	long before = proc_status_kb("VmRSS:");
	if (malloc_trim(0) != 1)
		return 1;
	long after = proc_status_kb("VmRSS:");
	/* The four full spans went back (less a few pages that reading the figures and
	 * glibc's own trim touch meanwhile). */
	if (before - after < 3 * 64)
		return 2;
	int n = 0, reused = -1;
	while (n < REUSE_MAX && reused < 0) {
		unsigned char *q = blocks[n++] = m_block(500);
		for (int k = 8; k < 500; k++)	/* past the free list's link */
			if (q[k] != 0)
				return 3;
		if ((uintptr_t)q - lo <= hi - lo)
			reused = n - 1;
	}
	if (reused < 0)
		return 4;
	struct site_counts c = site_lookup(__FILE__, m_line, "m_block");
	if (c.bytes != 500LL * n || c.calls != (unsigned long long)n)
		return 5;
	free_all(n);
	return 0;
}

/* Spans in classes, as malloc_info() reports them (-1 if it cannot be read). */
static long spans_in_classes(void)
{
	long n = -1;
	char *doc = malloc_info_doc();
	const char *at = doc ? strstr(doc, "<spans in-use=\"") : NULL;
	if (!at || sscanf(at, "<spans in-use=\"%ld\"", &n) != 1)
		n = -1;
	free(doc);
	return n;
}

/* Forty classes left holding nothing but this thread's cached slots (a block of
 * each allocated, then all freed), while another class's span has fewer free slots
 * than a refill takes: that refill must take a span. The idle classes' slots go back
 * first, and their spans serve it; had it taken a new one, the forty would still be
 * held by their classes. Prints how many more spans the classes hold after a span's
 * worth of blocks of the growing class. */
enum { IDLE_FIRST = 8, IDLE_CLASSES = 40, GROW_CLASS = 24, GROW_SLOTS = 39, GROW_BATCH = 4 };
static const size_t grow_size = 24 + 16 * GROW_CLASS;	/* 408 usable bytes: 39 slots a span */

/* Nine refills of four: the class's span has its last three slots left, the cache
 * is empty. Returns how many blocks that took. */
static int grow_class_to_its_last_slots(void)
{
	int n = 0;
	while (n < GROW_SLOTS / GROW_BATCH * GROW_BATCH)
		blocks[n++] = m_block(grow_size);
	return n;
}

/* What the idle case stands on (the heap's span and batch sizes, which it does not
 * export): after grow_class_to_its_last_slots(), the next block's refill takes a
 * second span. Prints how many more spans the classes hold then. */
static int child_idle_precondition(void)
{
	int n = grow_class_to_its_last_slots();
	long before = spans_in_classes();
	blocks[n++] = m_block(grow_size);
	long after = spans_in_classes();
	free_all(n);
	if (before < 0 || after < 0)
		return 1;
	fprintf(stderr, "%ld\n", after - before);
	return 0;
}

static int child_idle_classes(void)
{
	int n = grow_class_to_its_last_slots();
	long before = spans_in_classes();
	void *one[IDLE_CLASSES];
	/* Each class's block live while the next takes a span (an idle class would give
	 * its span to the next), then all freed. */
	for (int c = IDLE_FIRST, made = 0; made < IDLE_CLASSES; c++)
		if (c != GROW_CLASS)
			one[made++] = m_block(24 + 16 * (size_t)c);
	for (int i = 0; i < IDLE_CLASSES; i++)
		free(one[i]);
	while (n < 2 * GROW_SLOTS)
		blocks[n++] = m_block(grow_size);
	long after = spans_in_classes();
	free_all(n);
	if (before < 0 || after < 0)
		return 1;
	fprintf(stderr, "%ld\n", after - before);
	return 0;
}

/* How many times classes were handed a span, as malloc_info() reports it (-1 if it
 * cannot be read). */
static long long spans_taken(void)
{
	long long n = -1;
	char *doc = malloc_info_doc();
	const char *at = doc ? strstr(doc, "<spans in-use=\"") : NULL;
	if (!at || sscanf(at, "<spans in-use=\"%*u\" empty=\"%*u\" purged=\"%*u\" taken=\"%lld\"",
			  &n) != 1)
		n = -1;
	free(doc);
	return n;
}

/* Blocks made by realloc(NULL, n) and grown by realloc at once, as Lua allocates:
 * the classes they leave hold all their slots in the cache and look idle. Prints how
 * many spans classes were handed in the whole process, read once at the end: a read
 * allocates, and a span it leaves empty in the pool would hide the case. */
enum { REGROW_KEEP = 64, REGROW_ROUNDS = 100000 };
static int child_realloc_growth(void)
{
	static void *keep[REGROW_KEEP];
	for (int i = 0; i < REGROW_ROUNDS; i++) {
		int k = i % REGROW_KEEP;
		free(keep[k]);
		keep[k] = realloc(NULL, 32 + (size_t)(i & 7) * 8);
		keep[k] = realloc(keep[k], 96);
	}
	long long taken = spans_taken();
	for (int k = 0; k < REGROW_KEEP; k++)
		free(keep[k]);
	if (taken < 0)
		return 1;
	fprintf(stderr, "%lld\n", taken);
	return 0;
}

enum { MOVE_BLOCKS = 2000 };
static uintptr_t move_lo = UINTPTR_MAX, move_hi;

static void *allocate_200(void *arg)
{
	(void)arg;
	for (int i = 0; i < MOVE_BLOCKS; i++) {
		blocks[i] = m_block(200);
		uintptr_t a = (uintptr_t)blocks[i];
		move_lo = a < move_lo ? a : move_lo;
		move_hi = a > move_hi ? a : move_hi;
	}
	return NULL;
}

static void *free_them(void *arg)
{
	(void)arg;
	free_all(MOVE_BLOCKS);
	return NULL;
}

static int outside_moved(int n)
{
	int outside = 0;
	for (int i = 0; i < n; i++)
		outside += (uintptr_t)blocks[i] < move_lo - 65536 ||
			   (uintptr_t)blocks[i] >= move_hi + 65536;
	return outside;
}

static void *allocate_800(void *arg)
{
	(void)arg;
	for (int i = 0; i < MOVE_BLOCKS / 4; i++)
		blocks[i] = m_block(800);
	return (void *)(intptr_t)outside_moved(MOVE_BLOCKS / 4);
}

static int run_thread(void *(*fn)(void *))
{
	pthread_t t;
	void *ret;
	if (pthread_create(&t, NULL, fn, NULL) || pthread_join(t, &ret))
		return -1;
	return (int)(intptr_t)ret;
}

static int child_spans_move(void)
{
	if (run_thread(allocate_200) || run_thread(free_them))
		return 1;
	if (run_thread(allocate_800) != 0)	/* every block in the freed spans */
		return 2;
	struct site_counts c = site_lookup(__FILE__, m_line, "m_block");
	if (c.bytes != 800LL * MOVE_BLOCKS / 4 || c.calls != MOVE_BLOCKS / 4)
		return 3;
	pid_t pid = fork();
	if (pid == 0) {	/* the child empties those spans and fills them again */
		free_all(MOVE_BLOCKS / 4);
		for (int i = 0; i < MOVE_BLOCKS; i++)
			blocks[i] = m_block(150);
		c = site_lookup(__FILE__, m_line, "m_block");
		_exit(outside_moved(MOVE_BLOCKS) == 0 && c.bytes == 150LL * MOVE_BLOCKS &&
			      c.calls == MOVE_BLOCKS ? 0 : 1);
	}
	int status;
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status))
		return 4;
	free_all(MOVE_BLOCKS / 4);
	c = site_lookup(__FILE__, m_line, "m_block");
	return c.bytes == 0 && c.calls == 0 ? 0 : 5;
}

/* A program that limits itself to 512 MiB: how many blocks of 5000 bytes, then of 64
 * (the heap's), malloc gives before it fails. */
static int child_rlimit(void)
{
	/* The soft limit only, so that it can be lifted again to read the report (its
	 * renderer is a module loaded on first use). */
	struct rlimit lim = { (rlim_t)512 << 20, RLIM_INFINITY };
	if (setrlimit(RLIMIT_AS, &lim))
		return 1;
	static void *big[200000];
	int n1 = 0, n2 = 0;
	while (n1 < 200000 && (big[n1] = m_block(5000)))
		n1++;
	for (int i = 0; i < n1; i++)
		free(big[i]);
	while (n2 < PHASE1 * 8 && (n2 < PHASE1 ? (blocks[n2] = m_block(64)) : malloc(64)))
		n2++;
	if (n2 < PHASE1)
		return 2;
	for (int i = 0; i < PHASE1 / 2; i++)	/* room for reading the report */
		free(blocks[i]);
	lim.rlim_cur = RLIM_INFINITY;
	if (setrlimit(RLIMIT_AS, &lim))
		return 1;
	if (getenv("ALLOCINFO") == NULL) {
		struct site_counts c = site_lookup(__FILE__, m_line, "m_block");
		if (c.bytes != 64LL * PHASE1 / 2 || c.calls != PHASE1 / 2)
			return 3;
	}
	fprintf(stderr, "%d %d\n", n1, n2);
	return 0;
}

/* 20,000 blocks of 64 bytes aligned to a page: the resident memory's growth, in KiB. */
enum { ALIGNED_BLOCKS = 20000 };
static int p_line;
static int page_block(void **p)
{
	p_line = __LINE__ + 1;
	return posix_memalign(p, 4096, 64);
}

static int child_aligned(void)
{
	long start = proc_status_kb("VmRSS:");
	for (int i = 0; i < ALIGNED_BLOCKS; i++) {
		if (page_block(&blocks[i]) || (uintptr_t)blocks[i] % 4096)
			return 1;
		memset(blocks[i], 4, malloc_usable_size(blocks[i]));
	}
	long grown = proc_status_kb("VmRSS:") - start;
	if (malloc_usable_size(blocks[0]) != 72)	/* glibc's */
		return 2;
	if (getenv("ALLOCINFO") == NULL) {
		struct site_counts c = site_lookup(__FILE__, p_line, "page_block");
		if (c.bytes != 64LL * ALIGNED_BLOCKS || c.calls != ALIGNED_BLOCKS)
			return 3;
	}
	free_all(ALIGNED_BLOCKS);
	if (getenv("ALLOCINFO") == NULL) {
		struct site_counts c = site_lookup(__FILE__, p_line, "page_block");
		if (c.bytes != 0 || c.calls != 0)
			return 4;
	}
	fprintf(stderr, "%ld\n", grown);
	return 0;
}

/* mallinfo2's in-use bytes grow by each block's chunk, as glibc counts chunks: a
 * slot's stride, or a glibc chunk with the record in it; the report's total is the
 * bytes requested, and goes to 0 when they are freed. (The report's reader keeps
 * memory of its own, so mallinfo2 after it is not compared.) */
static int child_mallinfo(void)
{
	size_t sizes[16];
	void *p[16];
	for (int i = 0; i < 16; i++)
		sizes[i] = i < 10 ? 100 : i < 15 ? 1000 : 5000;
	/* The site registered, the classes' caches filled; kept, since a chunk freed
	 * into glibc's tcache would count as in use when handed out again. */
	void *warm[3] = { m_block(100), m_block(1000), m_block(5000) };
	struct mallinfo2 before = mallinfo2();
	for (int i = 0; i < 16; i++)
		p[i] = m_block(sizes[i]);
	struct mallinfo2 during = mallinfo2();
	struct site_counts live = site_lookup(__FILE__, m_line, "m_block");
	for (int i = 0; i < 16; i++)
		free(p[i]);
	for (int i = 0; i < 3; i++)
		free(warm[i]);
	size_t expected = 10 * 112 + 5 * 1008 + 5024;	/* strides; 5000 + 16 in glibc */
	struct site_counts c = site_lookup(__FILE__, m_line, "m_block");
	/* The report: the 16 blocks and the three kept, at their requested sizes. */
	fprintf(stderr, "%zu %lld %llu %lld %llu\n", during.uordblks - before.uordblks,
		live.bytes, live.calls, c.bytes, c.calls);
	return during.uordblks - before.uordblks == expected && c.bytes == 0 ? 0 : 1;
}

/* ---- the tests ------------------------------------------------------------------- */

/* Runs a child with env_add (or the default heap); its stderr in err. */
static void run_child(const char *mode, const char *env_add, char *err, size_t len)
{
	static const char *const drop[] = { "ALLOCINFO_HEAP=", "ALLOCINFO=", NULL };
	const char *add[] = { env_add, NULL };
	int code = spawn_self(mode, drop, add, err, len);
	if (code != 0)
		fail_msg("%s under %s: exit %d: %s", mode, env_add ? env_add : "the heap", code,
			 err);
}

/* Child `mode`'s one figure (KiB) with the heap, and with glibc alone. */
static void heap_and_glibc_kb(const char *mode, long *heap, long *plain)
{
	need_heap();
	char err[4096];
	run_child(mode, NULL, err, sizeof(err));
	*heap = atol(err);
	run_child(mode, "ALLOCINFO=never", err, sizeof(err));
	*plain = atol(err);
}

/* Child `mode`'s peak growth with the heap within 10% of glibc's, which must be at
 * least `floor` KiB (so that the phase ran). */
static void assert_peak_near_glibc(const char *mode, long floor)
{
	long heap, plain;
	heap_and_glibc_kb(mode, &heap, &plain);
	print_message("%s: peak +%ld KiB, glibc +%ld KiB\n", mode, heap, plain);
	assert_true(plain > floor);
	assert_true(heap <= plain + plain / 10);
}

static void test_phase_change_peak_near_glibc(void **state)
{
	(void)state;
	assert_peak_near_glibc("phase", 60000);	/* 80 MB of blocks of 64 bytes */
}

static void test_scattered_phase_change_peak_near_glibc(void **state)
{
	(void)state;
	assert_peak_near_glibc("scatter", 3000);	/* 3.8 MB of blocks of 88 bytes */
}

static void test_trim_gives_back_as_glibc(void **state)
{
	(void)state;
	long heap, plain;
	heap_and_glibc_kb("trim", &heap, &plain);
	print_message("after free and malloc_trim(0): +%ld KiB, glibc +%ld KiB\n", heap, plain);
	assert_true(heap <= plain + 5 * 1024);
}

static void test_glibc_hole_goes_back_as_the_heap_grows(void **state)
{
	(void)state;
	long heap, plain;
	heap_and_glibc_kb("hole", &heap, &plain);
	print_message("8 MiB of small blocks after an 8 MiB hole in glibc's arena: +%ld KiB, "
		      "glibc +%ld KiB\n", heap, plain);
	/* The heap's 8.5 MiB of spans, less the hole: at most a trim step (1 MiB) and
	 * the spans' and tables' pages more than glibc, where keeping the hole would
	 * be 8 MiB more. */
	assert_true(heap <= plain + 1536);
}

static void test_glibc_hole_goes_back_as_large_blocks_are_freed(void **state)
{
	(void)state;
	long heap = 0, plain = 0;
	/* The trim that gives the hole back is timed against the trims' budget (see
	 * test_slow_glibc_trims_are_spaced_out): on a machine busy enough (two suites
	 * at once) it waits past the end of the run. Tried again, three times at most. */
	for (int attempt = 0; attempt < 3; attempt++) {
		heap_and_glibc_kb("spanhole", &heap, &plain);
		print_message("8 MiB of small blocks again, into their spans, after an 8 MiB "
			      "hole: +%ld KiB, glibc +%ld KiB\n", heap, plain);
		if (heap <= plain + 1536)
			break;
	}
	/* Both hold the small blocks' 8 MiB; keeping the hole would be 8 MiB more. */
	assert_true(plain > 8000);
	assert_true(heap <= plain + 1536);
}

static void test_glibc_top_reused_is_kept(void **state)
{
	(void)state;
	long heap, plain;
	heap_and_glibc_kb("churn", &heap, &plain);
	print_message("%d rounds of %d buffers of 96 KiB made and freed at glibc's top: %ld "
		      "page faults, glibc %ld\n", CHURN_ROUNDS, CHURN_BUFFERS, heap, plain);
	/* Trimming the top at each trim due faulted the buffers in again: 96 faults a
	 * round. */
	assert_true(heap <= plain + 1000);
}

static void test_mapped_blocks_make_no_trim(void **state)
{
	(void)state;
	need_heap();
	char err[4096];
	run_child("mapped", NULL, err, sizeof(err));
	print_message("%d blocks of 40 MiB made and freed: %ld trims\n", MAPPED_BLOCKS, atol(err));
	assert_int_equal(atol(err), 0);
}

static void test_slow_glibc_trims_are_spaced_out(void **state)
{
	(void)state;
	need_heap();
	/* 80 MiB of slots: 80 trims due. Each walks the 50,000 chunks (0.1 to 1.5 ms,
	 * as fast as the machine); the trims' budget is 1 ms, and 2% of the time that
	 * passes: some are made, and the others wait and are merged into them. A trim
	 * is timed by the clock on the wall: one the scheduler stops for a while (make
	 * -j, a busy machine) looks as long as that, so a run whose trims overran the
	 * budget is tried again, three times at most. */
	bool within = false;
	for (int attempt = 0; attempt < 3 && !within; attempt++) {
		char err[4096];
		run_child("fragtrim", NULL, err, sizeof(err));
		unsigned long long done, spaced, us;
		long long took;
		assert_int_equal(sscanf(err, "%llu %llu %llu %lld", &done, &spaced, &us, &took), 4);
		print_message("64 MiB of small blocks over 50,000 free glibc chunks, in %lld us: "
			      "%llu trims (%llu us), %llu spaced out\n", took, done, us, spaced);
		assert_true(done >= 1);
		assert_true(done + spaced >= 70);
		/* Within the budget, with room for the last trim, which may overdraw it by
		 * one trim's time, and for the clocks read around the trims. */
		long long per = (long long)(us / done), budget = 1000 + took / 50;
		within = (long long)us <= budget + 2 * per + 200;
		/* Had every request been made, the trims would have overspent it: some
		 * waited. */
		if (within && per * (long long)(done + spaced) > budget + 4 * per + 200)
			assert_true(spaced >= 1);
	}
	assert_true(within);
}

static void test_empty_spans_go_back_after_a_while(void **state)
{
	(void)state;
	need_heap();
	char err[4096];
	run_child("delay", NULL, err, sizeof(err));
	long full, after;
	assert_int_equal(sscanf(err, "%ld %ld", &full, &after), 2);
	print_message("full +%ld KiB, empty a while +%ld KiB\n", full, after);
	assert_true(full > 90000);
	assert_true(after < full / 10);	/* what stays: spans holding cached slots */
}

static void test_purge_delay_grows_when_regretted(void **state)
{
	(void)state;
	need_heap();
	char err[4096];
	run_child("regret", NULL, err, sizeof(err));
	unsigned before, after;
	int regrets;
	long freed, kept, gone;
	long long kept_ms;
	assert_int_equal(sscanf(err, "%u %u %d %ld %ld %ld %lld", &before, &after, &regrets,
				&freed, &kept, &gone, &kept_ms), 7);
	print_message("delay %u ms, then %u ms; freed +%ld KiB, %lld ms later +%ld KiB, "
		      "%u ms later +%ld KiB\n", before, after, freed, kept_ms, kept,
		      after * 13 / 10, gone);
	assert_int_equal(before, 500);
	/* One step a delay: 1,000 ms, unless the refill itself took longer than that (a
	 * step more for each delay it took, on a machine busy with other work). */
	static const uintmax_t doubled[] = { 1000, 2000, 4000 };
	assert_in_set(after, doubled, 3);
	assert_true(regrets);
	assert_true(freed > 90000);
	if (kept_ms < after)	/* else the reading came after the delay: nothing to tell */
		assert_true(kept > freed - freed / 10);	/* nothing purged yet */
	else
		print_message("the machine took %lld ms to read at 0.7 of the delay\n", kept_ms);
	assert_true(gone < freed / 10);		/* purged at 1.3 of the delay */
}

static void test_purged_span_is_reused(void **state)
{
	(void)state;
	need_heap();
	char err[4096];
	run_child("reuse", NULL, err, sizeof(err));
	assert_string_equal(err, "");
}

static void test_idle_classes_spans_serve_a_growing_one(void **state)
{
	(void)state;
	need_heap();
	char err[4096];
	long more;
	/* The growing class's next refill must take a span, else the case below would
	 * pass with or without the reclaim it is about. */
	run_child("idlepre", NULL, err, sizeof(err));
	assert_int_equal(sscanf(err, "%ld", &more), 1);
	assert_int_equal(more, 1);
	run_child("idle", NULL, err, sizeof(err));
	assert_int_equal(sscanf(err, "%ld", &more), 1);
	print_message("40 idle classes, then a span's worth of another: %ld spans more in "
		      "classes\n", more);
	/* About one, taken from the idle classes' spans; 41 if the growing class took
	 * a new span while they kept theirs. Reading the figures allocates too: a class
	 * or two may keep a span for it, or, drained with the idle ones, give one back
	 * (fewer spans than before, which is no failure). */
	assert_true(more <= 4);
}

static void test_realloc_growth_keeps_its_spans(void **state)
{
	(void)state;
	need_heap();
	char err[4096];
	long long taken;
	run_child("regrow", NULL, err, sizeof(err));
	assert_int_equal(sscanf(err, "%lld", &taken), 1);
	print_message("%d rounds of realloc(NULL, 32..88) grown to 96 bytes: %lld spans "
		      "taken in all\n", (int)REGROW_ROUNDS, taken);
	/* A span a class the process uses. When every refill drained the classes the
	 * blocks leave, a span went back to the pool and was taken again most rounds. */
	assert_true(taken > 0);
	assert_true(taken <= 64);
}

static void test_spans_move_between_threads_and_fork(void **state)
{
	(void)state;
	need_heap();
	char err[4096];
	run_child("move", NULL, err, sizeof(err));
	assert_string_equal(err, "");
}

static void test_rlimit_as_lowered_at_run_time(void **state)
{
	(void)state;
	need_heap();
	char err[4096];
	int big, small, plain_big, plain_small;
	run_child("rlimit", NULL, err, sizeof(err));
	assert_int_equal(sscanf(err, "%d %d", &big, &small), 2);
	run_child("rlimit", "ALLOCINFO_HEAP=glibc", err, sizeof(err));
	assert_int_equal(sscanf(err, "%d %d", &plain_big, &plain_small), 2);
	print_message("under 512 MiB: %d and %d blocks, over glibc's heap %d and %d\n", big,
		      small, plain_big, plain_small);
	/* The heap's share of the limit is its tables and first step, 12.5 MiB: 2,600
	 * blocks of 5,000 bytes. Its blocks of 64 bytes take 80, glibc's with a record 96. */
	assert_true(plain_big > 75000);	/* most of 512 MiB: the rest is the program's
					 * and the libraries' own mappings */
	assert_true(big >= plain_big - 2700);
	assert_true(small >= plain_small);
}

static void test_page_aligned_blocks_cost_what_glibc_s_do(void **state)
{
	(void)state;
	long heap, plain;
	heap_and_glibc_kb("aligned", &heap, &plain);
	print_message("20,000 x posix_memalign(4096, 64): +%ld KiB, glibc +%ld KiB\n", heap,
		      plain);
	assert_true(plain > 70000);	/* a page each */
	assert_true(heap <= plain + plain / 20);
}

static void test_mallinfo2_counts_the_heap(void **state)
{
	(void)state;
	need_heap();
	char err[4096];
	run_child("mallinfo", NULL, err, sizeof(err));
	/* 11,184 bytes of chunks for 11,000 requested (16 blocks), plus the 6,100 of
	 * the three kept */
	assert_string_equal(err, "11184 17100 19 0 0\n");
}

int main(int argc, char **argv)
{
	static const struct {
		const char *mode;
		int (*run)(void);
	} children[] = {
		{ "phase", child_phase_change }, { "trim", child_trim },
		{ "delay", child_delayed_purge }, { "reuse", child_purged_span_reused },
		{ "move", child_spans_move },	 { "rlimit", child_rlimit },
		{ "mallinfo", child_mallinfo },	 { "aligned", child_aligned },
		{ "scatter", child_scattered_phase }, { "hole", child_glibc_hole },
		{ "fragtrim", child_fragmented_glibc }, { "spanhole", child_hole_after_spans },
		{ "idle", child_idle_classes }, { "idlepre", child_idle_precondition },
		{ "regrow", child_realloc_growth }, { "regret", child_purge_regret },
		{ "churn", child_buffer_churn }, { "mapped", child_mapped_frees },
	};
	if (argc == 2) {
		for (size_t i = 0; i < sizeof(children) / sizeof(children[0]); i++)
			if (!strcmp(argv[1], children[i].mode))
				return children[i].run();
		return 127;
	}
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_phase_change_peak_near_glibc),
		cmocka_unit_test(test_scattered_phase_change_peak_near_glibc),
		cmocka_unit_test(test_trim_gives_back_as_glibc),
		cmocka_unit_test(test_glibc_hole_goes_back_as_the_heap_grows),
		cmocka_unit_test(test_glibc_hole_goes_back_as_large_blocks_are_freed),
		cmocka_unit_test(test_glibc_top_reused_is_kept),
		cmocka_unit_test(test_mapped_blocks_make_no_trim),
		cmocka_unit_test(test_slow_glibc_trims_are_spaced_out),
		cmocka_unit_test(test_empty_spans_go_back_after_a_while),
		cmocka_unit_test(test_purge_delay_grows_when_regretted),
		cmocka_unit_test(test_purged_span_is_reused),
		cmocka_unit_test(test_idle_classes_spans_serve_a_growing_one),
		cmocka_unit_test(test_realloc_growth_keeps_its_spans),
		cmocka_unit_test(test_spans_move_between_threads_and_fork),
		cmocka_unit_test(test_rlimit_as_lowered_at_run_time),
		cmocka_unit_test(test_mallinfo2_counts_the_heap),
		cmocka_unit_test(test_page_aligned_blocks_cost_what_glibc_s_do),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
