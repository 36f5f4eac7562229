/* SPDX-License-Identifier: MIT */
/*
 * The sampling profiler's hooks (allocinfo_profiler_*): at rate 1 every allocation is
 * sampled with its size, tag and stack; sample data round-trips to on_free; realloc in
 * place; unsampled blocks carry nothing; the estimate at the default rate; attach,
 * start, stop, snapshot and detach from several threads while others allocate; user
 * callbacks and the profiler together; ALLOCINFO_PROFILE_UNWIND; fork; ALLOCINFO=never.
 */
#define _GNU_SOURCE
#include <allocinfo.h>

#include <dlfcn.h>
#include <errno.h>
#include <malloc.h>
#include <math.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "spawn_self.h"

#define NOINLINE __attribute__((noinline, noclone))

static const char *base_name(const char *path)
{
	const char *s = path ? strrchr(path, '/') : NULL;
	return s ? s + 1 : path;
}

/* ---- a profiler that records what it sees ------------------------------------------ */

#define DATA_SIZE 48
#define MAX_SEEN 64
#define DATA_MAGIC 0x5a3c96e1u

struct seen {
	struct allocinfo_sample s;
	void *frames[ALLOCINFO_PROFILE_FRAMES_MAX];
	int data_was_zero;
};

struct freed {
	void *block;
	size_t size;
	uint32_t magic;
	void *data_block;	/* what on_alloc wrote into the sample data */
};

struct recorder {
	void *watch[MAX_SEEN];	/* nonnull: only these blocks are kept */
	int nwatch;
	struct seen seen[MAX_SEEN];
	int nseen;
	struct freed freed[MAX_SEEN];
	int nfreed;
	int inplace;
	size_t inplace_old, inplace_new;
	void *inplace_block;
	uint32_t inplace_magic;
	int snapshots;
	long allocs, frees;	/* every call */
	size_t next_rate;
};

/* Blocks being made by the test itself are recorded; the rest is counted only. The
 * test sets `recording` around its own allocations (volatile: the compiler knows
 * that malloc and free read no variable of the program). */
static __thread volatile int recording;

static size_t rec_alloc(void *arg, const struct allocinfo_sample *s)
{
	struct recorder *r = arg;
	__atomic_add_fetch(&r->allocs, 1, __ATOMIC_RELAXED);
	if (s->sample_data) {
		struct freed *d = s->sample_data;
		const unsigned char *b = s->sample_data;
		int zero = 1;
		for (int i = 0; i < DATA_SIZE; i++)
			zero &= b[i] == 0;
		if (recording && r->nseen < MAX_SEEN)
			r->seen[r->nseen].data_was_zero = zero;
		d->magic = DATA_MAGIC;
		d->data_block = s->block;
	}
	if (recording && r->nseen < MAX_SEEN) {
		struct seen *w = &r->seen[r->nseen++];
		w->s = *s;
		int n = s->nframes < ALLOCINFO_PROFILE_FRAMES_MAX ? s->nframes : 0;
		memcpy(w->frames, s->frames, (size_t)n * sizeof(void *));
		w->s.frames = w->frames;
	}
	return r->next_rate;
}

static void rec_free(void *arg, void *block, size_t size, void *data)
{
	struct recorder *r = arg;
	__atomic_add_fetch(&r->frees, 1, __ATOMIC_RELAXED);
	if (recording && r->nfreed < MAX_SEEN) {
		struct freed *f = &r->freed[r->nfreed++];
		f->block = block;
		f->size = size;
		f->magic = data ? ((struct freed *)data)->magic : 0;
		f->data_block = data ? ((struct freed *)data)->data_block : NULL;
	}
}

static void rec_inplace(void *arg, void *block, size_t old_size, size_t new_size, void *data)
{
	struct recorder *r = arg;
	r->inplace++;
	r->inplace_block = block;
	r->inplace_old = old_size;
	r->inplace_new = new_size;
	r->inplace_magic = data ? ((struct freed *)data)->magic : 0;
}

static void rec_snapshot(void *arg)
{
	struct recorder *r = arg;
	__atomic_add_fetch(&r->snapshots, 1, __ATOMIC_RELAXED);
}

static void attach_recorder(struct recorder *r, size_t rate)
{
	memset(r, 0, sizeof(*r));
	struct allocinfo_profiler p = { 0 };
	p.sample_data_size = DATA_SIZE;
	p.initial_sample_rate = rate;
	p.on_alloc = rec_alloc;
	p.on_free = rec_free;
	p.on_realloc_inplace = rec_inplace;
	p.on_snapshot = rec_snapshot;
	assert_int_equal(allocinfo_profiler_attach(&p, r), 0);
	assert_int_equal(allocinfo_profiler_start(), 0);
}

static const struct seen *seen_block(const struct recorder *r, const void *p)
{
	for (int i = 0; i < r->nseen; i++)
		if (r->seen[i].s.block == p)
			return &r->seen[i];
	return NULL;
}

static const struct freed *freed_block(const struct recorder *r, const void *p)
{
	for (int i = 0; i < r->nfreed; i++)
		if (r->freed[i].block == p)
			return &r->freed[i];
	return NULL;
}

/* The function a return address lies in (the test is linked with -rdynamic). */
static const char *function_of(void *ra)
{
	Dl_info di;
	/* A return address may be one past the call at a function's very end. */
	if (!dladdr((char *)ra - 1, &di) || !di.dli_sname)
		return "?";
	return di.dli_sname;
}

static void assert_tag(unsigned int tag, const char *file, unsigned int line)
{
	struct allocinfo_ptr_info info;
	assert_int_equal(allocinfo_tag_info(tag, &info, NULL, NULL), 0);
	assert_string_equal(base_name(info.file), file);
	assert_int_equal(info.line, line);
}

/* ---- a call chain with known functions ---------------------------------------------- */

static volatile unsigned leaf_line, plain_line;

NOINLINE void *profiler_leaf(size_t n)
{
	leaf_line = __LINE__ + 1;
	void *p = malloc(n);
	__asm__ volatile("" ::: "memory");	/* no tail call: the frame stays */
	return p;
}

NOINLINE void *profiler_middle(size_t n)
{
	void *p = profiler_leaf(n);
	__asm__ volatile("" ::: "memory");
	return p;
}

NOINLINE void *profiler_outer(size_t n)
{
	void *p = profiler_middle(n);
	__asm__ volatile("" ::: "memory");
	return p;
}

/* An allocation without a tag of its own: charged to its caller. */
NOINLINE void *profiler_untagged(size_t n)
{
	void *(*volatile fn)(size_t) = (malloc);
	plain_line = __LINE__ + 1;
	void *p = fn(n);
	__asm__ volatile("" ::: "memory");
	return p;
}

static volatile unsigned calloc_line;

NOINLINE void *profiler_calloc(size_t n, size_t m)
{
	calloc_line = __LINE__ + 1;
	void *p = calloc(n, m);
	__asm__ volatile("" ::: "memory");
	return p;
}

NOINLINE void test_profiler_caller(void **out)
{
	out[0] = profiler_outer(1000);
	out[1] = profiler_outer(7);
	out[2] = profiler_untagged(300000);
	out[3] = profiler_calloc(3, 10);
	__asm__ volatile("" ::: "memory");
}

static void assert_stack(const struct seen *w, const char *const *names, int n)
{
	assert_true(w->s.nframes >= n);
	for (int i = 0; i < n; i++)
		assert_string_equal(function_of(w->frames[i]), names[i]);
}

/* ---- rate 1 ------------------------------------------------------------------------ */

static void test_rate1_sizes_tags_stacks(void **state)
{
	(void)state;
	struct recorder r;
	attach_recorder(&r, 1);
	recording = 1;
	void *out[4];
	test_profiler_caller(out);
	void *a = out[0], *b = out[1], *c = out[2], *d = out[3];
	void *z = malloc(0);
	recording = 0;
	assert_int_equal(allocinfo_profiler_stop(), 0);

	const char *chain[] = { "profiler_leaf", "profiler_middle", "profiler_outer",
				"test_profiler_caller" };
	const struct seen *w = seen_block(&r, a);
	assert_non_null(w);
	assert_int_equal(w->s.size, 1000);
	assert_int_equal(w->s.sample_rate, 1);
	assert_int_equal(w->s.bytes_since_last, 1000);
	assert_tag(w->s.tag, "test_profiler.c", leaf_line);
	assert_stack(w, chain, 4);
	assert_true(w->data_was_zero);
	assert_ptr_equal(w->s.block, a);
	assert_non_null(w->s.sample_data);

	w = seen_block(&r, b);
	assert_non_null(w);
	assert_int_equal(w->s.size, 7);
	assert_int_equal(w->s.bytes_since_last, 7);
	assert_stack(w, chain, 4);

	const char *plain_chain[] = { "profiler_untagged", "test_profiler_caller" };
	w = seen_block(&r, c);
	assert_non_null(w);
	assert_int_equal(w->s.size, 300000);
	assert_stack(w, plain_chain, 2);
	struct allocinfo_ptr_info info;
	assert_int_equal(allocinfo_tag_info(w->s.tag, &info, NULL, NULL), 0);
	assert_string_equal(base_name(info.file), "test_profiler.c");
	assert_int_equal(info.line, plain_line);
	assert_string_equal(info.func, "profiler_untagged");

	w = seen_block(&r, d);
	assert_non_null(w);
	assert_int_equal(w->s.size, 30);
	assert_tag(w->s.tag, "test_profiler.c", calloc_line);
	for (int i = 0; i < 30; i++)
		assert_int_equal(((unsigned char *)d)[i], 0);
	const char *calloc_chain[] = { "profiler_calloc", "test_profiler_caller" };
	assert_stack(w, calloc_chain, 2);

	w = seen_block(&r, z);	/* rate 1: even a 0-byte block */
	assert_non_null(w);
	assert_int_equal(w->s.size, 0);

	/* The tag's exact live bytes and count. */
	long long bytes = -1, count = -1;
	assert_int_equal(allocinfo_tag_info(seen_block(&r, a)->s.tag, NULL, &bytes, &count), 0);
	assert_int_equal(bytes, 1007);
	assert_int_equal(count, 2);
	assert_int_equal(malloc_usable_size(a) >= 1000, 1);

	recording = 1;
	free(a);
	free(b);
	free(c);
	free(d);
	free(z);
	recording = 0;
	assert_int_equal(allocinfo_tag_info(seen_block(&r, a)->s.tag, NULL, &bytes, &count), 0);
	assert_int_equal(bytes, 0);
	assert_int_equal(count, 0);
	assert_int_equal(allocinfo_profiler_detach(), 0);
	assert_int_equal(r.nfreed, 5);
	assert_int_equal(allocinfo_tag_info(0, NULL, NULL, NULL), -1);
	assert_int_equal(allocinfo_tag_info(0x7fffffff, NULL, NULL, NULL), -1);
}

/* Data written in on_alloc is what on_free gets, for the same block and size, also
 * after the profiler is stopped; once detached nothing is called. */
static void test_sample_data_round_trip(void **state)
{
	(void)state;
	struct recorder r;
	attach_recorder(&r, 1);
	recording = 1;
	void *p[8];
	for (int i = 0; i < 8; i++) {
		errno = 4321;	/* a sampled allocation leaves the caller's errno alone */
		p[i] = malloc((size_t)(i + 1) * 100);
		assert_int_equal(errno, 4321);
	}
	recording = 0;
	assert_int_equal(r.nseen, 8);
	assert_int_equal(allocinfo_profiler_stop(), 0);
	recording = 1;
	for (int i = 0; i < 6; i++)
		free(p[i]);
	recording = 0;
	assert_int_equal(r.nfreed, 6);
	for (int i = 0; i < 6; i++) {
		const struct freed *f = freed_block(&r, p[i]);
		assert_non_null(f);
		assert_int_equal(f->size, (size_t)(i + 1) * 100);
		assert_int_equal(f->magic, DATA_MAGIC);
		assert_ptr_equal(f->data_block, p[i]);
	}
	assert_int_equal(allocinfo_profiler_detach(), 0);
	long frees = r.frees;
	free(p[6]);
	free(p[7]);
	assert_int_equal(r.frees, frees);	/* detached: nothing */
	assert_int_equal(allocinfo_profiler_detach(), -ENOENT);
	assert_int_equal(allocinfo_profiler_start(), -ENOENT);
	assert_int_equal(allocinfo_profiler_stop(), -ENOENT);
	assert_int_equal(allocinfo_profiler_snapshot(), -ENOENT);
}

static void test_realloc_sampled(void **state)
{
	(void)state;
	struct recorder r;
	attach_recorder(&r, 1);
	recording = 1;
	char *p = malloc(100);
	memset(p, 'x', 100);
	char *q = realloc(p, 50);	/* fits: in place */
	recording = 0;
	assert_ptr_equal(q, p);
	assert_int_equal(r.inplace, 1);
	assert_ptr_equal(r.inplace_block, p);
	assert_int_equal(r.inplace_old, 100);
	assert_int_equal(r.inplace_new, 50);
	assert_int_equal(r.inplace_magic, DATA_MAGIC);
	struct allocinfo_ptr_info info;
	assert_int_equal(allocinfo_pointer_info(p, &info), 0);
	assert_int_equal(info.size, 50);
	recording = 1;
	char *m = realloc(q, 1 << 20);	/* moves: the old block's on_free, a new sample */
	recording = 0;
	assert_non_null(m);
	assert_ptr_not_equal(m, q);
	const struct freed *f = freed_block(&r, q);
	assert_non_null(f);
	assert_int_equal(f->size, 50);
	assert_int_equal(f->magic, DATA_MAGIC);
	const struct seen *w = seen_block(&r, m);
	assert_non_null(w);
	assert_int_equal(w->s.size, 1 << 20);
	for (int i = 0; i < 50; i++)
		assert_int_equal(m[i], 'x');
	/* Stopped: a sampled block still reallocates in place with the callback. */
	assert_int_equal(allocinfo_profiler_stop(), 0);
	char *m2 = realloc(m, 1000);
	assert_ptr_equal(m2, m);
	assert_int_equal(r.inplace, 2);
	assert_int_equal(r.inplace_new, 1000);
	recording = 1;
	free(m2);
	recording = 0;
	f = freed_block(&r, m2);
	assert_non_null(f);
	assert_int_equal(f->size, 1000);
	assert_int_equal(allocinfo_profiler_detach(), 0);
}

/* Aligned sampled blocks keep their alignment and usable size. */
static void test_aligned(void **state)
{
	(void)state;
	struct recorder r;
	attach_recorder(&r, 1);
	recording = 1;
	void *a = NULL;
	assert_int_equal(posix_memalign(&a, 4096, 100), 0);
	void *b = aligned_alloc(64, 640);
	void *c = memalign(32, 33);
	recording = 0;
	assert_int_equal((uintptr_t)a % 4096, 0);
	assert_int_equal((uintptr_t)b % 64, 0);
	assert_int_equal((uintptr_t)c % 32, 0);
	assert_non_null(seen_block(&r, a));
	assert_non_null(seen_block(&r, b));
	assert_non_null(seen_block(&r, c));
	assert_true(malloc_usable_size(a) >= 100);
	assert_true(malloc_usable_size(b) >= 640);
	memset(a, 1, malloc_usable_size(a));
	memset(b, 1, malloc_usable_size(b));
	recording = 1;
	free(a);
	free(b);
	free(c);
	recording = 0;
	assert_int_equal(freed_block(&r, a)->magic, DATA_MAGIC);
	assert_int_equal(freed_block(&r, b)->size, 640);
	assert_int_equal(freed_block(&r, c)->size, 33);
	assert_int_equal(allocinfo_profiler_detach(), 0);
}

/* At a rate far above what is allocated nothing is sampled, and blocks are the plain
 * ones: same usable size as without a profiler, no sample header. */
static void test_unsampled_blocks_plain(void **state)
{
	(void)state;
	size_t sizes[] = { 24, 100, 5000, 100000 };
	size_t plain[4];
	for (int i = 0; i < 4; i++) {
		void *p = malloc(sizes[i]);
		plain[i] = malloc_usable_size(p);
		free(p);
	}
	struct recorder r;
	attach_recorder(&r, (size_t)1 << 50);
	for (int i = 0; i < 4; i++) {
		void *p = malloc(sizes[i]);
		assert_int_equal(malloc_usable_size(p), plain[i]);
		struct allocinfo_ptr_info info;
		assert_int_equal(allocinfo_pointer_info(p, &info), 0);
		assert_ptr_equal(info.start, p);
		assert_int_equal(info.size, sizes[i]);
		free(p);
	}
	assert_int_equal(r.allocs, 0);
	/* A sampled one: pointer_info still finds it, with its size. */
	assert_int_equal(allocinfo_profiler_detach(), 0);
	attach_recorder(&r, 1);
	recording = 1;
	void *s = malloc(5000);
	recording = 0;
	assert_non_null(seen_block(&r, s));
	struct allocinfo_ptr_info info;
	assert_int_equal(allocinfo_pointer_info((char *)s + 10, &info), 0);
	assert_ptr_equal(info.start, s);
	assert_int_equal(info.size, 5000);
	free(s);
	assert_int_equal(allocinfo_profiler_detach(), 0);
}

/* on_alloc's return value is that thread's next rate. */
static void test_on_alloc_sets_rate(void **state)
{
	(void)state;
	struct recorder r;
	attach_recorder(&r, 1);
	r.next_rate = (size_t)1 << 50;	/* after the first sample: practically never */
	void *p[10];
	for (int i = 0; i < 10; i++)
		p[i] = malloc(1000);
	assert_int_equal(r.allocs, 1);
	for (int i = 0; i < 10; i++)
		free(p[i]);
	assert_int_equal(r.frees, 1);
	assert_int_equal(allocinfo_profiler_detach(), 0);
}

/* ---- the estimate at the default rate ----------------------------------------------- */

struct estimate {
	double weight;		/* sum of s / (1 - exp(-s/R)) over live samples */
	long samples;
};

static size_t est_alloc(void *arg, const struct allocinfo_sample *s)
{
	struct estimate *e = arg;
	double w = (double)s->size / -expm1(-(double)s->size / (double)s->sample_rate);
	memcpy(s->sample_data, &w, sizeof(w));
	e->weight += w;
	e->samples++;
	return 0;
}

static void est_free(void *arg, void *block, size_t size, void *data)
{
	(void)block;
	(void)size;
	struct estimate *e = arg;
	double w;
	memcpy(&w, data, sizeof(w));
	e->weight -= w;
	e->samples--;
}

NOINLINE void *estimate_site(size_t n)
{
	return malloc(n);
}

static void test_estimate_default_rate(void **state)
{
	(void)state;
	struct estimate e = { 0, 0 };
	struct allocinfo_profiler p = { 0 };
	p.sample_data_size = sizeof(double);
	p.on_alloc = est_alloc;
	p.on_free = est_free;
	assert_int_equal(allocinfo_profiler_attach(&p, &e), 0);
	assert_int_equal(allocinfo_profiler_start(), 0);
	/* 1 GiB of 1 MiB blocks (left untouched: glibc maps them, the kernel gives no page
	 * until written), 256 MiB of 64 KiB blocks, 24 MiB of 200-byte ones: the relative
	 * standard error is about 1.4%, so 10% is seven of them. */
	enum { BIG = 1024, MID = 4096, SMALL = 120000 };
	static void *big[BIG], *mid[MID], *small[SMALL];
	double exact = 0;
	for (int i = 0; i < BIG; i++) {
		big[i] = estimate_site(1 << 20);
		exact += 1 << 20;
	}
	for (int i = 0; i < MID; i++) {
		mid[i] = estimate_site(1 << 16);
		exact += 1 << 16;
	}
	for (int i = 0; i < SMALL; i++) {
		small[i] = estimate_site(200);
		exact += 200;
	}
	assert_int_equal(allocinfo_profiler_stop(), 0);
	long long live = 0;
	unsigned tag = 0;
	struct allocinfo_ptr_info info;
	assert_int_equal(allocinfo_pointer_info(big[0], &info), 0);
	/* The exact figure agrees. */
	for (unsigned t = 2; t < 1000000; t++) {
		struct allocinfo_ptr_info ti;
		if (allocinfo_tag_info(t, &ti, &live, NULL) < 0)
			break;
		if (ti.line == info.line && !strcmp(ti.file, info.file) &&
		    !strcmp(ti.func, info.func)) {
			tag = t;
			break;
		}
	}
	assert_true(tag != 0);
	assert_true((double)live == exact);
	double rel = fabs(e.weight - exact) / exact;
	print_message("estimate %.0f for %.0f bytes: %.2f%% off, %ld samples\n", e.weight, exact,
		      100 * rel, e.samples);
	assert_true(rel < 0.10);
	for (int i = 0; i < BIG; i++)
		free(big[i]);
	for (int i = 0; i < MID; i++)
		free(mid[i]);
	for (int i = 0; i < SMALL; i++)
		free(small[i]);
	assert_int_equal(e.samples, 0);
	assert_true(fabs(e.weight) < 1);
	assert_int_equal(allocinfo_profiler_detach(), 0);
}

/* A rate small against the blocks, where the weights matter: 100,000 blocks of 512
 * bytes at 4 KiB are each sampled with probability 0.12 and the estimate's relative
 * standard error is about 0.9%; sampling with gaps 20% too short would be 23% off. */
static void test_estimate_small_rate(void **state)
{
	(void)state;
	struct estimate e = { 0, 0 };
	struct allocinfo_profiler p = { 0 };
	p.sample_data_size = sizeof(double);
	p.initial_sample_rate = 4096;
	p.on_alloc = est_alloc;
	p.on_free = est_free;
	assert_int_equal(allocinfo_profiler_attach(&p, &e), 0);
	assert_int_equal(allocinfo_profiler_start(), 0);
	enum { N = 100000, M = 20000 };
	static void *a[N], *b[M];
	double exact = 0;
	for (int i = 0; i < N; i++) {
		a[i] = estimate_site(512);
		exact += 512;
	}
	for (int i = 0; i < M; i++) {
		b[i] = estimate_site(100);
		exact += 100;
	}
	assert_int_equal(allocinfo_profiler_stop(), 0);
	double rel = fabs(e.weight - exact) / exact;
	print_message("estimate %.0f for %.0f bytes: %.2f%% off, %ld samples\n", e.weight, exact,
		      100 * rel, e.samples);
	assert_true(rel < 0.05);
	for (int i = 0; i < N; i++)
		free(a[i]);
	for (int i = 0; i < M; i++)
		free(b[i]);
	assert_int_equal(e.samples, 0);
	assert_int_equal(allocinfo_profiler_detach(), 0);
}

/* ---- several threads ---------------------------------------------------------------- */

struct mt {
	int stop;
	int attached;		/* set while the control thread's profiler may be called */
	long violations;	/* a callback after detach returned, or foreign data */
	long allocs, frees, snapshots;
};

static struct mt g_mt;

static size_t mt_alloc(void *arg, const struct allocinfo_sample *s)
{
	(void)arg;
	if (!__atomic_load_n(&g_mt.attached, __ATOMIC_ACQUIRE))
		__atomic_add_fetch(&g_mt.violations, 1, __ATOMIC_RELAXED);
	uint32_t m = DATA_MAGIC;
	memcpy(s->sample_data, &m, sizeof(m));
	__atomic_add_fetch(&g_mt.allocs, 1, __ATOMIC_RELAXED);
	void *scratch = malloc(64);	/* a callback's own allocation: never sampled */
	free(scratch);
	return 0;
}

static void mt_free(void *arg, void *block, size_t size, void *data)
{
	(void)arg;
	(void)block;
	(void)size;
	uint32_t m;
	memcpy(&m, data, sizeof(m));
	if (m != DATA_MAGIC || !__atomic_load_n(&g_mt.attached, __ATOMIC_ACQUIRE))
		__atomic_add_fetch(&g_mt.violations, 1, __ATOMIC_RELAXED);
	__atomic_add_fetch(&g_mt.frees, 1, __ATOMIC_RELAXED);
}

static void mt_snapshot(void *arg)
{
	(void)arg;
	__atomic_add_fetch(&g_mt.snapshots, 1, __ATOMIC_RELAXED);
}

static void *mt_allocator(void *arg)
{
	(void)arg;
	void *keep[64] = { 0 };
	unsigned x = 12345;
	while (!__atomic_load_n(&g_mt.stop, __ATOMIC_ACQUIRE)) {
		for (int i = 0; i < 64; i++) {
			x = x * 1103515245u + 12345u;
			free(keep[i]);
			keep[i] = (x & 1) ? malloc(x % 4000) : realloc(NULL, x % 300);
			if (keep[i] && (x & 6) == 6)
				keep[i] = realloc(keep[i], x % 9000 + 1);
		}
	}
	for (int i = 0; i < 64; i++)
		free(keep[i]);
	return NULL;
}

static void *mt_controller(void *arg)
{
	(void)arg;
	struct allocinfo_profiler p = { 0 };
	p.sample_data_size = sizeof(uint32_t);
	p.initial_sample_rate = 2048;
	p.on_alloc = mt_alloc;
	p.on_free = mt_free;
	p.on_snapshot = mt_snapshot;
	for (int round = 0; round < 40; round++) {
		__atomic_store_n(&g_mt.attached, 1, __ATOMIC_RELEASE);
		if (allocinfo_profiler_attach(&p, NULL) != 0)
			__atomic_add_fetch(&g_mt.violations, 1000, __ATOMIC_RELAXED);
		allocinfo_profiler_start();
		usleep(2000);
		allocinfo_profiler_snapshot();
		allocinfo_profiler_stop();
		usleep(500);
		if (allocinfo_profiler_detach() != 0)
			__atomic_add_fetch(&g_mt.violations, 1000, __ATOMIC_RELAXED);
		__atomic_store_n(&g_mt.attached, 0, __ATOMIC_RELEASE);
		usleep(500);
	}
	return NULL;
}

/* Starts, stops and snapshots from another thread, whether attached or not. */
static void *mt_switcher(void *arg)
{
	(void)arg;
	while (!__atomic_load_n(&g_mt.stop, __ATOMIC_ACQUIRE)) {
		int r = allocinfo_profiler_snapshot();
		if (r != 0 && r != -ENOENT)
			__atomic_add_fetch(&g_mt.violations, 1000, __ATOMIC_RELAXED);
		r = allocinfo_profiler_start();
		if (r != 0 && r != -ENOENT)
			__atomic_add_fetch(&g_mt.violations, 1000, __ATOMIC_RELAXED);
		usleep(300);
	}
	return NULL;
}

static void test_threads(void **state)
{
	(void)state;
	memset(&g_mt, 0, sizeof(g_mt));
	pthread_t alloc[3], ctl, sw;
	for (int i = 0; i < 3; i++)
		assert_int_equal(pthread_create(&alloc[i], NULL, mt_allocator, NULL), 0);
	assert_int_equal(pthread_create(&sw, NULL, mt_switcher, NULL), 0);
	assert_int_equal(pthread_create(&ctl, NULL, mt_controller, NULL), 0);
	pthread_join(ctl, NULL);
	__atomic_store_n(&g_mt.stop, 1, __ATOMIC_RELEASE);
	for (int i = 0; i < 3; i++)
		pthread_join(alloc[i], NULL);
	pthread_join(sw, NULL);
	print_message("%ld samples, %ld frees, %ld snapshots\n", g_mt.allocs, g_mt.frees,
		      g_mt.snapshots);
	assert_int_equal(g_mt.violations, 0);
	assert_true(g_mt.allocs > 0);
	assert_true(g_mt.frees > 0);
	assert_true(g_mt.snapshots >= 40);
}

/* ---- user callbacks and the profiler together --------------------------------------- */

static long cb_calls;

static void count_post(void *u, struct allocinfo_event *e)
{
	(void)u;
	(void)e;
	cb_calls++;
}

static void test_with_callbacks(void **state)
{
	(void)state;
	struct allocinfo_callbacks cb = { sizeof(cb), 0, NULL, count_post, NULL };
	int h = allocinfo_callbacks_add(&cb);
	assert_true(h >= 0);
	struct recorder r;
	attach_recorder(&r, 1);
	cb_calls = 0;
	recording = 1;
	void *a = profiler_outer(4000);
	char *b = realloc(NULL, 10);
	b = realloc(b, 5);	/* in place */
	recording = 0;
	assert_int_equal(cb_calls, 3);
	const struct seen *w = seen_block(&r, a);
	assert_non_null(w);
	const char *chain[] = { "profiler_leaf", "profiler_middle", "profiler_outer" };
	assert_stack(w, chain, 3);
	assert_non_null(seen_block(&r, b));
	assert_int_equal(r.inplace, 1);
	recording = 1;
	free(a);
	free(b);
	recording = 0;
	assert_int_equal(cb_calls, 5);
	assert_int_equal(freed_block(&r, a)->magic, DATA_MAGIC);
	assert_int_equal(freed_block(&r, b)->size, 5);
	assert_int_equal(allocinfo_callbacks_remove(h), 0);
	assert_int_equal(allocinfo_profiler_detach(), 0);
}

/* ---- attach's checks ---------------------------------------------------------------- */

static size_t detach_inside(void *arg, const struct allocinfo_sample *s)
{
	(void)s;
	*(int *)arg = allocinfo_profiler_detach();
	return 0;
}

static void test_attach_checks(void **state)
{
	(void)state;
	struct allocinfo_profiler p = { 0 };
	p.reserved = 1;
	assert_int_equal(allocinfo_profiler_attach(&p, NULL), -EINVAL);
	p.reserved = 0;
	p.sample_data_size = ALLOCINFO_PROFILE_SAMPLE_DATA_MAX + 1;
	assert_int_equal(allocinfo_profiler_attach(&p, NULL), -EINVAL);
	assert_int_equal(allocinfo_profiler_attach(NULL, NULL), -EINVAL);
	p.sample_data_size = ALLOCINFO_PROFILE_SAMPLE_DATA_MAX;
	int inside = 1;
	p.initial_sample_rate = 1;
	p.on_alloc = detach_inside;
	assert_int_equal(allocinfo_profiler_attach(&p, &inside), 0);
	assert_int_equal(allocinfo_profiler_attach(&p, &inside), -EBUSY);
	assert_int_equal(allocinfo_profiler_start(), 0);
	void *x = malloc(3000);
	assert_int_equal(inside, -EDEADLK);
	memset(x, 0, 3000);
	free(x);
	assert_int_equal(allocinfo_profiler_detach(), 0);
}

/* A profiler may snapshot and stop itself from on_alloc (a built-in profiler's
 * automatic snapshots do); snapshot from inside on_snapshot is refused. */
struct reentry {
	int snapshot_in_alloc, stop_in_alloc, snapshot_in_snapshot, snapshots, allocs;
};

static size_t reenter_alloc(void *arg, const struct allocinfo_sample *s)
{
	(void)s;
	struct reentry *r = arg;
	if (r->allocs++ == 0) {
		r->snapshot_in_alloc = allocinfo_profiler_snapshot();
		r->stop_in_alloc = allocinfo_profiler_stop();
	}
	return 0;
}

static void reenter_snapshot(void *arg)
{
	struct reentry *r = arg;
	r->snapshots++;
	r->snapshot_in_snapshot = allocinfo_profiler_snapshot();
	free(malloc(100));	/* its own allocations: not sampled */
}

static void test_calls_from_callbacks(void **state)
{
	(void)state;
	struct reentry r = { 1, 1, 1, 0, 0 };
	struct allocinfo_profiler p = { 0 };
	p.initial_sample_rate = 1;
	p.on_alloc = reenter_alloc;
	p.on_snapshot = reenter_snapshot;
	assert_int_equal(allocinfo_profiler_attach(&p, &r), 0);
	assert_int_equal(allocinfo_profiler_start(), 0);
	void *a = malloc(10);
	void *b = malloc(10);	/* stopped by the first sample's on_alloc */
	free(a);
	free(b);
	assert_int_equal(r.allocs, 1);
	assert_int_equal(r.snapshots, 1);
	assert_int_equal(r.snapshot_in_alloc, 0);
	assert_int_equal(r.stop_in_alloc, 0);
	assert_int_equal(r.snapshot_in_snapshot, -EDEADLK);
	assert_int_equal(allocinfo_profiler_snapshot(), 0);
	assert_int_equal(r.snapshots, 2);
	assert_int_equal(allocinfo_profiler_detach(), 0);
}

/* ---- children: the environment, fork, ALLOCINFO=never ------------------------------- */

/* A child that samples one allocation at rate 1 and checks its stack. */
static int child_stack(void)
{
	struct recorder r;
	memset(&r, 0, sizeof(r));
	struct allocinfo_profiler p = { 0 };
	p.sample_data_size = DATA_SIZE;
	p.initial_sample_rate = 1;
	p.on_alloc = rec_alloc;
	if (allocinfo_profiler_attach(&p, &r) || allocinfo_profiler_start())
		return 10;
	recording = 1;
	void *a = profiler_outer(100);
	recording = 0;
	const struct seen *w = seen_block(&r, a);
	if (!w || w->s.nframes < 3)
		return 11;
	if (strcmp(function_of(w->frames[0]), "profiler_leaf") ||
	    strcmp(function_of(w->frames[1]), "profiler_middle") ||
	    strcmp(function_of(w->frames[2]), "profiler_outer"))
		return 12;
	free(a);
	return allocinfo_profiler_detach() ? 13 : 0;
}

static int child_never(void)
{
	struct allocinfo_profiler p = { 0 };
	return allocinfo_profiler_attach(&p, NULL) == -ENOTSUP ? 0 : 1;
}

static int run_child(const char *mode, const char *var, char *err, size_t len)
{
	static const char *const drop[] = { "ALLOCINFO=", "ALLOCINFO_PROFILE_UNWIND=", NULL };
	const char *add[] = { var, NULL };
	return spawn_self(mode, drop, add, err, len);
}

static void test_unwind_env(void **state)
{
	(void)state;
	char err[4096];
	assert_int_equal(run_child("stack", "ALLOCINFO_PROFILE_UNWIND=bogus", err, sizeof(err)), 0);
	assert_string_equal(err, "allocinfo: ALLOCINFO_PROFILE_UNWIND='bogus' is not 'unwind' "
				 "or 'fp'; using 'unwind'\n");
	assert_int_equal(run_child("stack", "ALLOCINFO_PROFILE_UNWIND=unwind", err, sizeof(err)), 0);
	assert_string_equal(err, "");
	/* This file is built with frame pointers. */
	assert_int_equal(run_child("stack", "ALLOCINFO_PROFILE_UNWIND=fp", err, sizeof(err)), 0);
	assert_string_equal(err, "");
}

static void test_never(void **state)
{
	(void)state;
	char err[4096];
	assert_int_equal(run_child("never", "ALLOCINFO=never", err, sizeof(err)), 0);
	assert_string_equal(err, "");
}

/* The child keeps the profiler, started; its samples and frees reach it. */
static void test_fork(void **state)
{
	(void)state;
	struct recorder r;
	attach_recorder(&r, 1);
	recording = 1;
	void *before = malloc(111);
	recording = 0;
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		recording = 1;
		void *p = malloc(2222);
		free(p);
		free(before);
		recording = 0;
		const struct seen *w = seen_block(&r, p);
		int ok = w && w->s.size == 2222 && freed_block(&r, p) &&
			 freed_block(&r, before) && freed_block(&r, before)->size == 111 &&
			 freed_block(&r, before)->magic == DATA_MAGIC;
		_exit(!ok ? 1 : allocinfo_profiler_detach() ? 2 : 0);
	}
	int status;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	free(before);
	assert_int_equal(allocinfo_profiler_detach(), 0);
}

int main(int argc, char **argv)
{
	if (argc == 2 && strcmp(argv[1], "stack") == 0)
		return child_stack();
	if (argc == 2 && strcmp(argv[1], "never") == 0)
		return child_never();
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rate1_sizes_tags_stacks),
		cmocka_unit_test(test_sample_data_round_trip),
		cmocka_unit_test(test_realloc_sampled),
		cmocka_unit_test(test_aligned),
		cmocka_unit_test(test_unsampled_blocks_plain),
		cmocka_unit_test(test_on_alloc_sets_rate),
		cmocka_unit_test(test_estimate_default_rate),
		cmocka_unit_test(test_estimate_small_rate),
		cmocka_unit_test(test_threads),
		cmocka_unit_test(test_with_callbacks),
		cmocka_unit_test(test_attach_checks),
		cmocka_unit_test(test_calls_from_callbacks),
		cmocka_unit_test(test_unwind_env),
		cmocka_unit_test(test_never),
		cmocka_unit_test(test_fork),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
