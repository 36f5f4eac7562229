/* SPDX-License-Identifier: MIT */
/*
 * User callbacks (allocinfo_callbacks_add): the arguments and call site each
 * operation shows its pre and post callbacks, rewrites of the request and of the
 * result, the order of a chain, removal while other threads allocate, fork while a
 * thread is inside a callback, re-entry, and ALLOCINFO_CALLBACKS.
 */
#include <allocinfo.h>

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "plain.h"
#include "site_report.h"
#include "spawn_self.h"

#define HERE_NEXT (__LINE__ + 1)

static const char *base_name(const char *path)
{
	const char *s = path ? strrchr(path, '/') : NULL;
	return s ? s + 1 : path;
}

/* The executable's basename: the module of this file's call sites. */
static const char *exe_name(void)
{
	static char buf[4096];
	ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
	buf[n > 0 ? n : 0] = '\0';
	return base_name(buf);
}

/* What malloc_usable_size() says of a counted block of n bytes made while callbacks
 * are registered: glibc's chunk for n and the 16-byte record, less the record; a
 * sanitizer's allocator gives exactly what was asked. */
static size_t usable_for(size_t n)
{
	const char *san = getenv("ALLOCINFO_SANITIZER");
	if (san && *san && strcmp(san, "no") != 0)
		return n;
	size_t chunk = (n + 16 + 8 + 15) & ~(size_t)15;
	return (chunk < 32 ? 32 : chunk) - 8 - 16;
}

/* ---- a callback that records what it sees ---------------------------------------- */

#define MAX_EVENTS 32

struct recorder {
	struct allocinfo_event pre[MAX_EVENTS], post[MAX_EVENTS];
	int npre, npost;
};

static void record_pre(void *u, struct allocinfo_event *e)
{
	struct recorder *r = u;
	if (r->npre < MAX_EVENTS)
		r->pre[r->npre++] = *e;
}

static void record_post(void *u, struct allocinfo_event *e)
{
	struct recorder *r = u;
	if (r->npost < MAX_EVENTS)
		r->post[r->npost++] = *e;
}

static int add_recorder(struct recorder *r, unsigned ops)
{
	memset(r, 0, sizeof(*r));
	struct allocinfo_callbacks cb = { sizeof(cb), ops, record_pre, record_post, r };
	int h = allocinfo_callbacks_add(&cb);
	assert_true(h >= 0);
	return h;
}

/* An event as expected: op, size, alignment, and the site (file basename, line,
 * func; NULL file for a caller tag). */
static void check_event(const struct allocinfo_event *e, int op, size_t size, size_t align,
			const char *file, unsigned line, const char *func, const char *module)
{
	assert_int_equal(e->op, op);
	assert_int_equal(e->size, size);
	assert_int_equal(e->alignment, align);
	if (file) {
		assert_non_null(e->file);
		assert_string_equal(base_name(e->file), file);
		assert_string_equal(e->func, func);
	} else {
		assert_null(e->file);
		assert_null(e->func);
	}
	assert_int_equal(e->line, line);
	assert_non_null(e->module);
	assert_string_equal(e->module, module);
}

/* ---- every operation, tagged ------------------------------------------------------ */

static void test_ops_tagged(void **state)
{
	(void)state;
	const char *F = "test_callbacks.c", *fn = "test_ops_tagged", *M = exe_name();
	struct recorder r;
	int h = add_recorder(&r, 0);

	int l_malloc = HERE_NEXT;
	char *p = malloc(100);
	int l_calloc = HERE_NEXT;
	char *c = calloc(3, 10);
	int l_realloc = HERE_NEXT;
	char *q = realloc(p, 200);
	int l_aligned = HERE_NEXT;
	void *a = aligned_alloc(64, 128);
	void *pm = NULL;
	int l_posix = HERE_NEXT;
	int rc = posix_memalign(&pm, 32, 50);
	int l_memalign = HERE_NEXT;
	void *m = memalign(128, 10);
	int l_valloc = HERE_NEXT;
	void *v = valloc(10);
	size_t usable = malloc_usable_size(q);
	free(q);
	free(c);
	free(a);
	free(pm);
	free(m);
	free(v);
	assert_int_equal(allocinfo_callbacks_remove(h), 0);

	assert_int_equal(rc, 0);
	assert_int_equal(r.npre, 14);
	assert_int_equal(r.npost, 14);
	long ps = sysconf(_SC_PAGESIZE);
	struct { int op; size_t size, align; int line; void *result; } want[] = {
		{ ALLOCINFO_OP_MALLOC, 100, 0, l_malloc, p },
		{ ALLOCINFO_OP_CALLOC, 30, 0, l_calloc, c },
		{ ALLOCINFO_OP_REALLOC, 200, 0, l_realloc, q },
		{ ALLOCINFO_OP_ALIGNED, 128, 64, l_aligned, a },
		{ ALLOCINFO_OP_ALIGNED, 50, 32, l_posix, pm },
		{ ALLOCINFO_OP_ALIGNED, 10, 128, l_memalign, m },
		{ ALLOCINFO_OP_ALIGNED, 10, (size_t)ps, l_valloc, v },
	};
	for (int i = 0; i < 7; i++) {
		check_event(&r.pre[i], want[i].op, want[i].size, want[i].align, F,
			    (unsigned)want[i].line, fn, M);
		check_event(&r.post[i], want[i].op, want[i].size, want[i].align, F,
			    (unsigned)want[i].line, fn, M);
		assert_ptr_equal(r.post[i].ptr, want[i].result);
		assert_null(r.pre[i].caller);
	}
	assert_null(r.pre[0].ptr);
	assert_ptr_equal(r.pre[2].ptr, p);	/* realloc's pre: the old block */
	/* malloc_usable_size: the block and its allocation's site; post has the answer */
	check_event(&r.pre[7], ALLOCINFO_OP_USABLE_SIZE, 200, 0, F, (unsigned)l_realloc, fn, M);
	assert_ptr_equal(r.pre[7].ptr, q);
	assert_int_equal(r.post[7].size, usable);
	assert_true(usable >= 200);
	/* free: each block with its allocation's site and size */
	struct { void *ptr; size_t size; int line; } freed[] = {
		{ q, 200, l_realloc }, { c, 30, l_calloc }, { a, 128, l_aligned },
		{ pm, 50, l_posix }, { m, 10, l_memalign }, { v, 10, l_valloc },
	};
	for (int i = 0; i < 6; i++) {
		check_event(&r.pre[8 + i], ALLOCINFO_OP_FREE, freed[i].size, 0, F,
			    (unsigned)freed[i].line, fn, M);
		assert_ptr_equal(r.pre[8 + i].ptr, freed[i].ptr);
		assert_ptr_equal(r.post[8 + i].ptr, freed[i].ptr);
		assert_int_equal(r.pre[8 + i].moved, 0);
	}
}

/* A tagged malloc too large for the small-block heap is made inline, in the caller,
 * while no callback is registered; with one, it defers to the library. */
static void test_inline_path_defers(void **state)
{
	(void)state;
	struct recorder r;
	int h = add_recorder(&r, 1u << ALLOCINFO_OP_MALLOC | 1u << ALLOCINFO_OP_CALLOC);
	int line = HERE_NEXT;
	char *p = malloc(5000);
	char *q = calloc(1, 6000);
	assert_int_equal(allocinfo_callbacks_remove(h), 0);
	assert_int_equal(r.npre, 2);
	check_event(&r.pre[0], ALLOCINFO_OP_MALLOC, 5000, 0, "test_callbacks.c", (unsigned)line,
		    "test_inline_path_defers", exe_name());
	assert_ptr_equal(r.post[0].ptr, p);
	check_event(&r.pre[1], ALLOCINFO_OP_CALLOC, 6000, 0, "test_callbacks.c",
		    (unsigned)line + 1, "test_inline_path_defers", exe_name());
	assert_ptr_equal(r.post[1].ptr, q);
	assert_site(__FILE__, line, "test_inline_path_defers", 5000, 1);
	free(p);
	free(q);
	/* none registered: the inline path again, no event */
	h = add_recorder(&r, 1u << ALLOCINFO_OP_FREE);
	assert_int_equal(allocinfo_callbacks_remove(h), 0);
	p = malloc(5000);
	free(p);
	assert_int_equal(r.npre, 0);
}

/* ---- a caller tag: code built without the header ------------------------------------ */

static void test_ops_caller_tagged(void **state)
{
	(void)state;
	struct recorder r;
	int h = add_recorder(&r, 1u << ALLOCINFO_OP_MALLOC | 1u << ALLOCINFO_OP_FREE);
	void *p = plain_alloc(77);
	plain_free(p);
	void *q = calloc(1, 5);	/* an op this callback does not want... */
	free(q);		/* ...while its free is */
	assert_int_equal(allocinfo_callbacks_remove(h), 0);

	assert_int_equal(r.npre, 3);
	assert_int_equal(r.npost, 3);
	/* libplain.so, or this program where sanitizer builds link it in statically */
	Dl_info di;
	assert_true(dladdr((void *)plain_alloc, &di));
	const char *M = strstr(di.dli_fname, ".so") ? base_name(di.dli_fname) : exe_name();
	/* A caller tag just made: no file or function yet, the module, the caller */
	check_event(&r.pre[0], ALLOCINFO_OP_MALLOC, 77, 0, NULL, 0, NULL, M);
	check_event(&r.post[0], ALLOCINFO_OP_MALLOC, 77, 0, NULL, 0, NULL, M);
	assert_ptr_equal(r.post[0].ptr, p);
	assert_true(dladdr(r.pre[0].caller, &di));
	assert_string_equal(di.dli_sname, "plain_alloc");
	check_event(&r.pre[1], ALLOCINFO_OP_FREE, 77, 0, NULL, 0, NULL, M);
	assert_ptr_equal(r.pre[1].ptr, p);
	assert_int_equal(r.pre[2].op, ALLOCINFO_OP_FREE);
	assert_ptr_equal(r.pre[2].ptr, q);
}

/* ---- rewrites ---------------------------------------------------------------------- */

static void add_64(void *u, struct allocinfo_event *e)
{
	(void)u;
	e->size += 64;
}

/* A pre that adds 64 bytes: the block, the counters and malloc_usable_size agree. */
static void test_pre_grows_size(void **state)
{
	(void)state;
	struct allocinfo_callbacks cb = { sizeof(cb), 1u << ALLOCINFO_OP_MALLOC, add_64, NULL,
					  NULL };
	int h = allocinfo_callbacks_add(&cb);
	assert_true(h >= 0);
	int line = HERE_NEXT;
	char *p = malloc(100);
	assert_int_equal(allocinfo_callbacks_remove(h), 0);
	assert_site(__FILE__, line, "test_pre_grows_size", 164, 1);
	size_t usable = malloc_usable_size(p);
	assert_int_equal(usable, usable_for(164));	/* 168 over glibc */
	memset(p, 1, usable);
	free(p);
	assert_site(__FILE__, line, "test_pre_grows_size", 0, 0);
}

static void align_256(void *u, struct allocinfo_event *e)
{
	(void)u;
	e->alignment = 256;
}

static void test_pre_raises_alignment(void **state)
{
	(void)state;
	unsigned ops = 1u << ALLOCINFO_OP_MALLOC | 1u << ALLOCINFO_OP_ALIGNED;
	struct allocinfo_callbacks cb = { sizeof(cb), ops, align_256, NULL, NULL };
	int h = allocinfo_callbacks_add(&cb);
	assert_true(h >= 0);
	int l1 = HERE_NEXT;
	void *p = malloc(40);
	int l2 = HERE_NEXT;
	void *q = aligned_alloc(32, 64);
	assert_int_equal(allocinfo_callbacks_remove(h), 0);
	assert_int_equal((uintptr_t)p % 256, 0);
	assert_int_equal((uintptr_t)q % 256, 0);
	assert_site(__FILE__, l1, "test_pre_raises_alignment", 40, 1);
	assert_site(__FILE__, l2, "test_pre_raises_alignment", 64, 1);
	free(p);
	free(q);
	assert_site(__FILE__, l1, "test_pre_raises_alignment", 0, 0);
	assert_site(__FILE__, l2, "test_pre_raises_alignment", 0, 0);
}

/* A header of 32 bytes in front of each block: pre asks for them, post hands out the
 * pointer past them, free's and usable_size's pre map it back. */
#define HEADER 32
static int header_frees;

static void header_pre(void *u, struct allocinfo_event *e)
{
	(void)u;
	switch (e->op) {
	case ALLOCINFO_OP_MALLOC:
		e->size += HEADER;
		break;
	case ALLOCINFO_OP_FREE:
	case ALLOCINFO_OP_USABLE_SIZE:
		if (e->moved >= HEADER) {
			char *block = (char *)e->ptr - HEADER;
			assert_int_equal(*(uint64_t *)block, 0x4845414445520000ull);
			e->ptr = block;
			header_frees += e->op == ALLOCINFO_OP_FREE;
		}
		break;
	}
}

static void header_post(void *u, struct allocinfo_event *e)
{
	(void)u;
	if (e->op == ALLOCINFO_OP_MALLOC && e->ptr) {
		/* the first 16 bytes are ours, the next 16 the library's */
		*(uint64_t *)e->ptr = 0x4845414445520000ull;
		e->ptr = (char *)e->ptr + HEADER;
	} else if (e->op == ALLOCINFO_OP_USABLE_SIZE) {
		e->size -= HEADER;
	}
}

static void test_post_moves_pointer(void **state)
{
	(void)state;
	struct allocinfo_callbacks cb = { sizeof(cb), 0, header_pre, header_post, NULL };
	int h = allocinfo_callbacks_add(&cb);
	assert_true(h >= 0);
	header_frees = 0;
	int line = HERE_NEXT;
	char *p = malloc(100);
	int line2 = HERE_NEXT;
	char *q = malloc(50);
	assert_int_equal((uintptr_t)p % 16, 0);
	memset(p, 7, 100);
	assert_site(__FILE__, line, "test_post_moves_pointer", 132, 1);
	assert_int_equal(malloc_usable_size(p), usable_for(132) - HEADER);
	free(p);
	assert_int_equal(header_frees, 1);
	assert_site(__FILE__, line, "test_post_moves_pointer", 0, 0);
	/* The callback gone, the library still finds q's block by the mark below it. */
	assert_int_equal(allocinfo_callbacks_remove(h), 0);
	assert_site(__FILE__, line2, "test_post_moves_pointer", 82, 1);
	assert_int_equal(malloc_usable_size(q), usable_for(82) - HEADER);
	free(q);
	assert_int_equal(header_frees, 1);
	assert_site(__FILE__, line2, "test_post_moves_pointer", 0, 0);
}

/* ---- a chain of three ------------------------------------------------------------- */

static char order[64];
static int order_len;

static void log_pre(void *u, struct allocinfo_event *e)
{
	(void)e;
	if (order_len < 60)
		order[order_len++] = *(const char *)u;
}

static void log_post(void *u, struct allocinfo_event *e)
{
	(void)e;
	if (order_len < 60)
		order[order_len++] = (char)(*(const char *)u - 'A' + 'a');
}

static void test_chain_order(void **state)
{
	(void)state;
	static const char names[] = "ABC";
	int h[3];
	for (int i = 0; i < 3; i++) {
		struct allocinfo_callbacks cb = { sizeof(cb), 1u << ALLOCINFO_OP_MALLOC, log_pre,
						  log_post, (void *)&names[i] };
		h[i] = allocinfo_callbacks_add(&cb);
		assert_true(h[i] >= 0);
	}
	assert_true(h[0] != h[1] && h[1] != h[2] && h[0] != h[2]);
	order_len = 0;
	free(malloc(10));
	order[order_len] = '\0';
	assert_string_equal(order, "ABCcba");
	/* The middle one removed: the others keep their order. */
	assert_int_equal(allocinfo_callbacks_remove(h[1]), 0);
	assert_int_equal(allocinfo_callbacks_remove(h[1]), -ENOENT);
	order_len = 0;
	free(malloc(10));
	order[order_len] = '\0';
	assert_string_equal(order, "ACca");
	assert_int_equal(allocinfo_callbacks_remove(h[0]), 0);
	assert_int_equal(allocinfo_callbacks_remove(h[2]), 0);
	order_len = 0;
	free(malloc(10));
	assert_int_equal(order_len, 0);
}

static void test_add_refuses_bad_input(void **state)
{
	(void)state;
	struct allocinfo_callbacks none = { sizeof(none), 0, NULL, NULL, NULL };
	struct allocinfo_callbacks bad_ops = { sizeof(bad_ops), 1u << 20, log_pre, NULL, NULL };
	struct allocinfo_callbacks small = { 8, 0, log_pre, NULL, NULL };
	assert_int_equal(allocinfo_callbacks_add(NULL), -EINVAL);
	assert_int_equal(allocinfo_callbacks_add(&none), -EINVAL);
	assert_int_equal(allocinfo_callbacks_add(&bad_ops), -EINVAL);
	assert_int_equal(allocinfo_callbacks_add(&small), -EINVAL);
	assert_int_equal(allocinfo_callbacks_remove(-1), -ENOENT);
}

/* ---- re-entry ---------------------------------------------------------------------- */

static int depth, max_depth, reentry_calls, reentry_line;
static void *kept[8];

static void allocating_pre(void *u, struct allocinfo_event *e)
{
	(void)u;
	(void)e;
	depth++;
	if (depth > max_depth)
		max_depth = depth;
	reentry_line = HERE_NEXT;
	void *p = malloc(10);	/* counted, and calls no callback */
	if (reentry_calls < 8)
		kept[reentry_calls] = p;
	else
		free(p);
	reentry_calls++;
	depth--;
}

static void test_callback_allocates(void **state)
{
	(void)state;
	struct allocinfo_callbacks cb = { sizeof(cb), 0, allocating_pre, NULL, NULL };
	reentry_calls = max_depth = 0;
	int h = allocinfo_callbacks_add(&cb);
	assert_true(h >= 0);
	void *p = malloc(20);
	assert_int_equal(allocinfo_callbacks_remove(h), 0);
	assert_int_equal(reentry_calls, 1);
	assert_int_equal(max_depth, 1);
	assert_site(__FILE__, reentry_line, "allocating_pre", 10, 1);
	free(kept[0]);
	free(p);
	assert_site(__FILE__, reentry_line, "allocating_pre", 0, 0);
}

static int inner_add_result;

static void adding_pre(void *u, struct allocinfo_event *e)
{
	(void)e;
	inner_add_result = allocinfo_callbacks_add(u);
}

static void test_add_from_callback_refused(void **state)
{
	(void)state;
	struct allocinfo_callbacks cb = { sizeof(cb), 1u << ALLOCINFO_OP_MALLOC, adding_pre, NULL,
					  NULL };
	cb.user_data = &cb;
	int h = allocinfo_callbacks_add(&cb);
	assert_true(h >= 0);
	free(malloc(1));
	assert_int_equal(allocinfo_callbacks_remove(h), 0);
	assert_int_equal(inner_add_result, -EDEADLK);
}

/* ---- add and remove while 8 threads allocate ---------------------------------------- */

#define WORKERS 8
#define LIVE_PER_WORKER 16

struct stats {
	long calls;
	int removed;	/* set once remove() returned: the callback must never see it */
};

static int stop_workers;
static int violations;

/* The workers' two call sites. */
static const int worker_malloc_line = __LINE__ + 3;
static __attribute__((noinline)) void *worker_malloc(size_t n)
{
	return malloc(n);
}

static const int worker_realloc_line = __LINE__ + 3;
static __attribute__((noinline)) void *worker_realloc(void *p, size_t n)
{
	return realloc(p, n);
}

static void counting_pre(void *u, struct allocinfo_event *e)
{
	(void)e;
	struct stats *s = u;
	if (__atomic_load_n(&s->removed, __ATOMIC_RELAXED))
		__atomic_add_fetch(&violations, 1, __ATOMIC_RELAXED);
	__atomic_add_fetch(&s->calls, 1, __ATOMIC_RELAXED);
}

static void *alloc_worker(void *arg)
{
	size_t size = 24 + 40 * (size_t)(uintptr_t)arg;
	void *live[LIVE_PER_WORKER] = { 0 };
	unsigned i = 0;
	while (!__atomic_load_n(&stop_workers, __ATOMIC_RELAXED)) {
		unsigned k = i++ % LIVE_PER_WORKER;
		free(live[k]);
		live[k] = worker_malloc(size);
		if (i % 3 == 0) {
			void *q = worker_realloc(live[k], size);
			if (q)
				live[k] = q;
		}
	}
	void **out = malloc(sizeof(live));
	memcpy(out, live, sizeof(live));
	return out;
}

static void test_add_remove_while_allocating(void **state)
{
	(void)state;
	pthread_t t[WORKERS];
	stop_workers = 0;
	violations = 0;
	for (intptr_t i = 0; i < WORKERS; i++)
		assert_int_equal(pthread_create(&t[i], NULL, alloc_worker, (void *)i), 0);
	long seen = 0;
	for (int round = 0; round < 200; round++) {
		struct stats *s[3];
		int h[3];
		for (int j = 0; j < 3; j++) {
			s[j] = calloc(1, sizeof(*s[j]));
			struct allocinfo_callbacks cb = { sizeof(cb), 0, counting_pre, NULL, s[j] };
			h[j] = allocinfo_callbacks_add(&cb);
			assert_true(h[j] >= 0);
		}
		usleep(200);
		for (int j = 0; j < 3; j++) {
			assert_int_equal(allocinfo_callbacks_remove(h[j]), 0);
			/* No thread is inside it now, and none will enter it. */
			__atomic_store_n(&s[j]->removed, 1, __ATOMIC_RELAXED);
			seen += __atomic_load_n(&s[j]->calls, __ATOMIC_RELAXED);
		}
		usleep(50);
		for (int j = 0; j < 3; j++)
			free(s[j]);	/* a late call would be a use after free */
	}
	__atomic_store_n(&stop_workers, 1, __ATOMIC_RELAXED);
	void **live[WORKERS];
	for (int i = 0; i < WORKERS; i++)
		pthread_join(t[i], (void **)&live[i]);
	assert_int_equal(violations, 0);
	assert_true(seen > 0);
	/* The counters: every worker's live blocks, at the realloc's or the malloc's site. */
	long long bytes = 0;
	unsigned long long calls = 0;
	for (int i = 0; i < WORKERS; i++)
		for (int k = 0; k < LIVE_PER_WORKER; k++)
			if (live[i][k]) {
				bytes += 24 + 40 * i;
				calls++;
			}
	struct site_counts a = site_lookup(__FILE__, worker_malloc_line, "worker_malloc");
	struct site_counts b = site_lookup(__FILE__, worker_realloc_line, "worker_realloc");
	assert_int_equal(a.bytes + b.bytes, bytes);
	assert_int_equal(a.calls + b.calls, calls);
	for (int i = 0; i < WORKERS; i++) {
		for (int k = 0; k < LIVE_PER_WORKER; k++)
			free(live[i][k]);
		free(live[i]);
	}
	a = site_lookup(__FILE__, worker_malloc_line, "worker_malloc");
	b = site_lookup(__FILE__, worker_realloc_line, "worker_realloc");
	assert_int_equal(a.bytes + b.bytes, 0);
	assert_int_equal(a.calls + b.calls, 0);
}

/* ---- ALLOCINFO_CALLBACKS ------------------------------------------------------------- */

static int child_runs_on(void)
{
	void *p = malloc(10);
	free(p);
	return p ? 0 : 1;
}

/* Started with the test library: its init registered a callback that counts. */
static int child_loaded(void)
{
	void *lib = dlopen(getenv("CBLIB"), RTLD_NOW | RTLD_NOLOAD);
	if (!lib)
		return 10;
	long *calls = dlsym(lib, "cblib_calls");
	if (!calls)
		return 11;
	long before = *calls;
	free(malloc(10));
	return *calls == before + 2 ? 0 : 12;	/* malloc and free */
}

/* This program as `argv0 mode` with ALLOCINFO_CALLBACKS=value (and extra, if any). */
static int run_child_env(const char *mode, const char *value, const char *extra, char *err,
			 size_t len)
{
	static const char *const drop[] = { "ALLOCINFO=", "ALLOCINFO_CALLBACKS=",
					    "CBLIB_INIT_RESULT=", NULL };
	char var[4200];
	snprintf(var, sizeof(var), "ALLOCINFO_CALLBACKS=%s", value);
	const char *add[] = { var, extra, NULL };
	return spawn_self(mode, drop, add, err, len);
}

static int run_child(const char *mode, const char *value, char *err, size_t len)
{
	return run_child_env(mode, value, NULL, err, len);
}

static void test_env_missing_library(void **state)
{
	(void)state;
	char err[4096];
	assert_int_equal(run_child("runs-on", "/nonexistent/libcb.so", err, sizeof(err)), 0);
	const char *want = "allocinfo: ALLOCINFO_CALLBACKS='/nonexistent/libcb.so': cannot load "
			   "it (/nonexistent/libcb.so: cannot open shared object file: No such "
			   "file or directory); no callbacks\n";
	assert_string_equal(err, want);
}

static void test_env_broken_library(void **state)
{
	(void)state;
	char path[] = "/tmp/allocinfo-cb-XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	char junk[128];
	memset(junk, 'x', sizeof(junk));	/* longer than an ELF header, and not one */
	assert_int_equal(write(fd, junk, sizeof(junk)), (ssize_t)sizeof(junk));
	close(fd);
	char err[4096];
	assert_int_equal(run_child("runs-on", path, err, sizeof(err)), 0);
	unlink(path);
	char want[512];
	snprintf(want, sizeof(want), "allocinfo: ALLOCINFO_CALLBACKS='%s': cannot load it (%s: "
		 "invalid ELF header); no callbacks\n", path, path);
	assert_string_equal(err, want);
}

static void test_env_no_init(void **state)
{
	(void)state;
	char err[4096], want[4400];
	const char *plain = getenv("PLUGIN");	/* a library without the function */
	assert_non_null(plain);
	assert_int_equal(run_child("runs-on", plain, err, sizeof(err)), 0);
	snprintf(want, sizeof(want), "allocinfo: ALLOCINFO_CALLBACKS='%s': it has no "
		 "allocinfo_callbacks_init(); no callbacks\n", plain);
	assert_string_equal(err, want);
}

static void test_env_loads_library(void **state)
{
	(void)state;
	char err[4096];
	const char *lib = getenv("CBLIB");
	assert_non_null(lib);
	assert_int_equal(run_child("loaded", lib, err, sizeof(err)), 0);
	assert_string_equal(err, "");
}

static void test_env_init_fails(void **state)
{
	(void)state;
	char err[4096], want[4400];
	const char *lib = getenv("CBLIB");
	assert_non_null(lib);
	assert_int_equal(run_child_env("runs-on", lib, "CBLIB_INIT_RESULT=-5", err, sizeof(err)),
			 0);
	snprintf(want, sizeof(want), "allocinfo: ALLOCINFO_CALLBACKS='%s': "
		 "allocinfo_callbacks_init() returned -5\n", lib);
	assert_string_equal(err, want);
}

/* ---- fork while another thread is inside a callback ----------------------------- */

static int parked_in_callback, release_parked;

/* Holds its thread inside the callback (a read-side section) until released. */
static void parking_pre(void *user_data, struct allocinfo_event *e)
{
	(void)user_data;
	if (e->op != ALLOCINFO_OP_MALLOC || e->size != 4321)
		return;
	__atomic_store_n(&parked_in_callback, 1, __ATOMIC_RELEASE);
	while (!__atomic_load_n(&release_parked, __ATOMIC_ACQUIRE))
		usleep(1000);
}

static int start_parking;

static void *parking_thread(void *arg)
{
	(void)arg;
	while (!__atomic_load_n(&start_parking, __ATOMIC_ACQUIRE))
		usleep(1000);
	free(malloc(4321));
	return NULL;
}

/* The child has one thread: the parent's thread parked in a callback is not one of
 * its readers, so removing the callback there finishes at once. */
static void test_fork_while_inside_callback(void **state)
{
	(void)state;
	parked_in_callback = release_parked = start_parking = 0;
	/* The thread is made first: under ThreadSanitizer a thread's start-up allocates
	 * before it may run instrumented code such as a callback. */
	pthread_t t;
	assert_int_equal(pthread_create(&t, NULL, parking_thread, NULL), 0);
	struct allocinfo_callbacks cb = { sizeof(cb), 0, parking_pre, NULL, NULL };
	int h = allocinfo_callbacks_add(&cb);
	assert_true(h >= 0);
	__atomic_store_n(&start_parking, 1, __ATOMIC_RELEASE);
	while (!__atomic_load_n(&parked_in_callback, __ATOMIC_ACQUIRE))
		usleep(1000);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0)
		_exit(allocinfo_callbacks_remove(h) == 0 ? 0 : 2);
	/* A grace period that never ends (signals are blocked while it waits): the child
	 * is killed after 10 s, and the test fails. */
	int status = 0;
	pid_t got = 0;
	for (int ms = 0; ms < 10000 && (got = waitpid(pid, &status, WNOHANG)) == 0; ms += 10)
		usleep(10000);
	if (got == 0) {
		kill(pid, SIGKILL);
		got = waitpid(pid, &status, 0);
	}
	assert_int_equal(got, pid);
	__atomic_store_n(&release_parked, 1, __ATOMIC_RELEASE);
	assert_int_equal(pthread_join(t, NULL), 0);
	assert_int_equal(allocinfo_callbacks_remove(h), 0);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

int main(int argc, char **argv)
{
	if (argc == 2 && strcmp(argv[1], "runs-on") == 0)
		return child_runs_on();
	if (argc == 2 && strcmp(argv[1], "loaded") == 0)
		return child_loaded();
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ops_tagged),
		cmocka_unit_test(test_inline_path_defers),
		cmocka_unit_test(test_ops_caller_tagged),
		cmocka_unit_test(test_pre_grows_size),
		cmocka_unit_test(test_pre_raises_alignment),
		cmocka_unit_test(test_post_moves_pointer),
		cmocka_unit_test(test_chain_order),
		cmocka_unit_test(test_add_refuses_bad_input),
		cmocka_unit_test(test_callback_allocates),
		cmocka_unit_test(test_add_from_callback_refused),
		cmocka_unit_test(test_add_remove_while_allocating),
		cmocka_unit_test(test_fork_while_inside_callback),
		cmocka_unit_test(test_env_missing_library),
		cmocka_unit_test(test_env_broken_library),
		cmocka_unit_test(test_env_no_init),
		cmocka_unit_test(test_env_loads_library),
		cmocka_unit_test(test_env_init_fails),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
