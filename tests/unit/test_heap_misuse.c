/* SPDX-License-Identifier: MIT */
/*
 * What each misuse of the heap gets, as Documentation/security.md ("Heap misuse")
 * says, tried the way a buggy or hostile program would:
 *  - a double free, a free of an address never handed out (slot-aligned or inside a
 *    block), a one-byte overrun into a block's trailer, a realloc of a freed block:
 *    the program ends (SIGABRT) with one line naming the problem and the address,
 *    also in a thread with a cancellation request pending;
 *  - a write to a freed block's first word (use after free, or an overflow from the
 *    block below) never makes malloc return the address written: the next malloc
 *    that would follow the link ends the program;
 *  - absurd alignments fail with glibc's errno, and pvalloc, valloc and memalign give
 *    glibc's usable sizes.
 * Each abort happens in a child (this program run again), whose stderr is compared.
 */
#include <allocinfo.h>

#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include <cmocka.h>

#include "site_report.h"
#include "spawn_self.h"

#pragma GCC diagnostic ignored "-Wpragmas"
#pragma GCC diagnostic ignored "-Wuse-after-free"
#pragma GCC diagnostic ignored "-Wfree-nonheap-object"
#pragma GCC diagnostic ignored "-Wstringop-overflow"
#pragma GCC diagnostic ignored "-Wanalyzer-double-free"

/* Skips under a sanitizer, whose allocator underneath has its own answers. */
static void need_glibc(void)
{
	const char *san = getenv("ALLOCINFO_SANITIZER");
	if (san && strcmp(san, "no"))
		skip();
}

static void need_heap(void)
{
	need_glibc();
	assert_int_equal(allocinfo__inline_v1.small_max, 1032);
}

/* Opaque to the compiler, so that the misuse below is not optimised away. */
static void *volatile keep;
static void *launder(void *p)
{
	keep = p;
	return keep;
}

/* ---- the children: each prints its addresses, then misuses the heap --------------- */

static int child_double_free(void)
{
	char *p = launder(malloc(48));
	fprintf(stderr, "%p\n", (void *)p);
	free(p);
	free(p);
	return 0;
}

/* A slot of the class of 700-byte blocks (720 apart, 22 to a span), ten slots past
 * the first block, which is the first slot of a new span: in the same span, past
 * the slots the first refill cut. */
static int child_never_allocated(void)
{
	char *p = launder(malloc(700));
	char *q = p + 10 * 720;
	fprintf(stderr, "%p\n", (void *)q);
	free(q);
	return 0;
}

static int child_interior(void)
{
	char *p = launder(malloc(48));
	fprintf(stderr, "%p\n", (void *)(p + 16));
	free(p + 16);
	return 0;
}

/* malloc(200) has 200 usable bytes: the string's terminator lands on the trailer. */
static int child_overrun(void)
{
	char *p = launder(malloc(200));
	fprintf(stderr, "%p\n", (void *)p);
	char *w = launder(p);	/* stores the compiler may not drop before free */
	memset(w, 'x', 200);
	w[200] = '\0';
	free(p);
	return 0;
}

static int child_realloc_freed(void)
{
	char *p = launder(malloc(48));
	fprintf(stderr, "%p\n", (void *)p);
	free(p);
	p = launder(realloc(p, 10));
	return 0;
}

static char target[64] __attribute__((aligned(16)));

/* The freed block's link overwritten with the address of a static buffer. */
static int child_use_after_free(void)
{
	void **p = launder(malloc(32));
	free(p);
	*p = target;
	void *a = launder(malloc(32));	/* p itself */
	void *b = launder(malloc(32));	/* would follow the link */
	fprintf(stderr, "%p %p %p\n", (void *)p, a, b);
	return 0;
}

/* The block just below a freed one overflows into the freed one's link. */
static int child_overflow_into_free(void)
{
	char *p = launder(malloc(32)), *q = launder(malloc(32));	/* q just below p */
	if (q + 48 != p)
		return 2;
	free(p);
	memset(q, 'A', 48 + 8);
	void *a = launder(malloc(32));
	void *b = launder(malloc(32));
	fprintf(stderr, "%p %p\n", a, b);
	return 0;
}

/* A double free in a thread with a cancellation request pending. Writing the message
 * must not be where the request is acted on: the thread would leave free() there,
 * cancelled, and the program run on where glibc aborts. Under ALLOCINFO_DEBUG (the
 * block is left alone) the message is written and free() returns. */
static volatile int g_cancel_sent;

static void *double_free_while_cancelled(void *arg)
{
	char *p = launder(arg);
	while (!__atomic_load_n(&g_cancel_sent, __ATOMIC_ACQUIRE))
		;	/* no cancellation point: the request stays pending */
	free(p);
	free(p);
	return p;
}

static int child_double_free_cancelled(void)
{
	pthread_t t;
	void *ret;
	/* made here, where the "double" child's block comes from the heap */
	if (pthread_create(&t, NULL, double_free_while_cancelled, launder(malloc(48))) ||
	    pthread_cancel(t))
		return 2;
	__atomic_store_n(&g_cancel_sent, 1, __ATOMIC_RELEASE);
	pthread_join(t, &ret);
	fprintf(stderr, "%s\n", ret == PTHREAD_CANCELED ? "cancelled in free" : "returned");
	return 0;
}

static const struct {
	const char *mode;
	int (*run)(void);
} children[] = {
	{ "double-cancelled", child_double_free_cancelled },
	{ "double", child_double_free },
	{ "never", child_never_allocated },
	{ "interior", child_interior },
	{ "overrun", child_overrun },
	{ "realloc", child_realloc_freed },
	{ "uaf", child_use_after_free },
	{ "neighbour", child_overflow_into_free },
};

/* Runs a child; asserts it died of SIGABRT, and returns its stderr. */
static const char *aborted(const char *mode)
{
	static char err[4096];
	static const char *const drop[] = { "ALLOCINFO_HEAP=", NULL };
	int status = spawn_self_status(mode, drop, NULL, err, sizeof(err));
	if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGABRT)
		fail_msg("%s: the child did not abort (status %#x): %s", mode, status, err);
	return err;
}

/* The child's first line is an address; the rest must be `message` with it. */
static void assert_named(const char *err, const char *message_fmt)
{
	void *p;
	assert_int_equal(sscanf(err, "%p", &p), 1);
	char expected[1024], line[64];
	snprintf(line, sizeof(line), "%p\n", p);
	size_t n = strlen(line);
	snprintf(expected + n, sizeof(expected) - n, message_fmt, p);
	memcpy(expected, line, n);
	assert_string_equal(err, expected);
}

static void test_double_free_aborts(void **state)
{
	(void)state;
	need_heap();
	assert_named(aborted("double"), "allocinfo: free(%p): not allocated: a double free, "
					 "or never handed out; aborting\n");
}

static void test_double_free_in_a_thread_being_cancelled_aborts(void **state)
{
	(void)state;
	need_heap();
	const char *err = aborted("double-cancelled");
	assert_non_null(strstr(err, "a double free, or never handed out; aborting\n"));
	assert_null(strstr(err, "cancelled in free"));
}

static void test_double_free_in_a_thread_being_cancelled_is_said_when_debugging(void **state)
{
	(void)state;
	need_heap();
	char err[4096];
	static const char *const drop[] = { "ALLOCINFO_HEAP=", "ALLOCINFO_DEBUG=", NULL };
	static const char *const add[] = { "ALLOCINFO_DEBUG=1", NULL };
	assert_int_equal(spawn_self("double-cancelled", drop, add, err, sizeof(err)), 0);
	assert_non_null(strstr(err, "allocinfo: free("));
	assert_non_null(strstr(err, "leaving it alone\n"));
	assert_non_null(strstr(err, "returned\n"));
}

static void test_free_of_a_slot_never_handed_out_aborts(void **state)
{
	(void)state;
	need_heap();
	assert_named(aborted("never"), "allocinfo: free(%p): not a block: never allocated; "
					"aborting\n");
}

static void test_free_inside_a_block_aborts(void **state)
{
	(void)state;
	need_heap();
	assert_named(aborted("interior"),
		     "allocinfo: free(%p): not the start of a block; aborting\n");
}

static void test_one_byte_overrun_aborts(void **state)
{
	(void)state;
	need_heap();
	assert_named(aborted("overrun"), "allocinfo: free(%p): the 8 bytes after the block "
					  "were overwritten (a heap buffer overflow); aborting\n");
}

static void test_realloc_of_a_freed_block_aborts(void **state)
{
	(void)state;
	need_heap();
	assert_named(aborted("realloc"), "allocinfo: realloc(%p): not allocated: a double "
					  "free, or never handed out; aborting\n");
}

/* The message names the link as it decoded: the key and the address shifted in make
 * it anything but the buffer's address. */
static void assert_bad_link(const char *err)
{
	static const char prefix[] = "allocinfo: malloc(): a free block was written to after "
				     "free (a link reads ";
	static const char suffix[] = "); aborting\n";
	assert_int_equal(strncmp(err, prefix, strlen(prefix)), 0);
	void *link;
	assert_int_equal(sscanf(err + strlen(prefix), "%p", &link), 1);
	assert_ptr_not_equal(link, target);
	size_t n = strlen(err);
	assert_true(n > strlen(suffix));
	assert_string_equal(err + n - strlen(suffix), suffix);
	assert_ptr_equal(strchr(err, '\n'), err + n - 1);	/* one line */
}

static void test_use_after_free_write_aborts(void **state)
{
	(void)state;
	need_heap();
	assert_bad_link(aborted("uaf"));
}

static void test_overflow_into_a_free_block_aborts(void **state)
{
	(void)state;
	need_heap();
	assert_bad_link(aborted("neighbour"));
}

/* ---- alignments, in this process --------------------------------------------------- */

static int a_line;
static void *a_block(size_t align, size_t n)
{
	a_line = __LINE__ + 1;
	return memalign(align, n);
}

static void test_absurd_alignments_fail_as_glibc(void **state)
{
	(void)state;
	need_glibc();
	errno = 0;
	assert_null(aligned_alloc(SIZE_MAX, 1));
	assert_int_equal(errno, EINVAL);
	errno = 0;
	assert_null(memalign(((size_t)1 << 63) + 1, 10));
	assert_int_equal(errno, EINVAL);
	errno = 0;
	assert_null(memalign((size_t)1 << 63, 10));	/* a power of two: too large */
	assert_int_equal(errno, ENOMEM);
	errno = 0;
	assert_null(memalign((size_t)1 << 62, 10));
	assert_int_equal(errno, ENOMEM);
	void *p = NULL;
	assert_int_equal(posix_memalign(&p, (size_t)1 << 62, 10), ENOMEM);
	assert_int_equal(posix_memalign(&p, ((size_t)1 << 63) + 8, 10), EINVAL);
	assert_int_equal(posix_memalign(&p, 24, 10), EINVAL);
	assert_null(p);
	errno = 0;
	assert_null(pvalloc(SIZE_MAX - 100));
	assert_int_equal(errno, ENOMEM);
}

/* glibc 2.36's usable sizes for the same calls (checked against it by hand): the
 * record and padding in front change nothing the caller sees. */
static void test_aligned_usable_sizes_are_glibc_s(void **state)
{
	(void)state;
	need_glibc();
	static const struct {
		size_t align, n, usable;
	} cases[] = {
		{ 64, 0, 24 }, { 4096, 64, 72 }, { 3, 10, 24 }, { 4096, 0, 24 },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *p = a_block(cases[i].align, cases[i].n);
		assert_non_null(p);
		size_t align = cases[i].align == 3 ? 4 : cases[i].align;
		assert_int_equal((uintptr_t)p % align, 0);
		assert_int_equal(malloc_usable_size(p), cases[i].usable);
		memset(p, 1, cases[i].usable);
		assert_site(__FILE__, a_line, "a_block", cases[i].n, 1);
		free(p);
		assert_site(__FILE__, a_line, "a_block", 0, 0);
	}
	void *p = pvalloc(0);
	assert_int_equal(malloc_usable_size(p), 24);
	free(p);
	p = pvalloc(1);
	assert_int_equal((uintptr_t)p % 4096, 0);
	assert_int_equal(malloc_usable_size(p), 4104);
	free(p);
	p = valloc(0);
	assert_int_equal(malloc_usable_size(p), 24);
	free(p);
}

int main(int argc, char **argv)
{
	if (argc == 2) {
		struct rlimit no_core = { 0, 0 };
		setrlimit(RLIMIT_CORE, &no_core);
		for (size_t i = 0; i < sizeof(children) / sizeof(children[0]); i++)
			if (!strcmp(argv[1], children[i].mode))
				return children[i].run();
		return 127;
	}
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_double_free_aborts),
		cmocka_unit_test(test_double_free_in_a_thread_being_cancelled_aborts),
		cmocka_unit_test(test_double_free_in_a_thread_being_cancelled_is_said_when_debugging),
		cmocka_unit_test(test_free_of_a_slot_never_handed_out_aborts),
		cmocka_unit_test(test_free_inside_a_block_aborts),
		cmocka_unit_test(test_one_byte_overrun_aborts),
		cmocka_unit_test(test_realloc_of_a_freed_block_aborts),
		cmocka_unit_test(test_use_after_free_write_aborts),
		cmocka_unit_test(test_overflow_into_a_free_block_aborts),
		cmocka_unit_test(test_absurd_alignments_fail_as_glibc),
		cmocka_unit_test(test_aligned_usable_sizes_are_glibc_s),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
