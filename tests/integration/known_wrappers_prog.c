/* SPDX-License-Identifier: MIT */
/*
 * Wrappers known by name (xmalloc, xcalloc, xstrdup, as git and gnulib have them),
 * built with the header: their tagged calls reach the library through the header's
 * out-of-line helpers and, in C++, through the overloads that take the tag, which -O0
 * does not inline. Built as C and as C++, at -O0 and -O2. The same calls run twice:
 * on a thread whose stack is the smallest there is (PTHREAD_STACK_MIN: the first
 * walks out of a wrapper, and the first reading of the program's symbols, happen
 * there), then on a coroutine (makecontext) whose stack ends just above its first
 * frame; both stacks end at a page that is not mapped, so that a walk reading past
 * the top of the stack faults. In C++ also a wrapper declared by its bare name,
 * pool::grab. Prints the calls' lines, then the report.
 * Usage: known_wrappers_prog
 */
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#define KEEP_FRAME() __asm__ volatile("" ::: "memory")

__attribute__((noinline)) void *xmalloc(size_t n)
{
	void *p = malloc(n);
	if (!p)
		abort();
	KEEP_FRAME();
	return p;
}

__attribute__((noinline)) void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n, size);
	if (!p)
		abort();
	KEEP_FRAME();
	return p;
}

__attribute__((noinline)) char *xstrdup(const char *s)
{
	char *p = strdup(s);
	if (!p)
		abort();
	KEEP_FRAME();
	return p;
}

#ifdef __cplusplus
/* A C++ wrapper in a namespace, declared by its bare name (ALLOCINFO_WRAPPERS=
 * pool::grab), whose allocation carries no tag: operator new, charged by the walk
 * out of its frame, which is found by the symbol _ZN4pool4grabEm. */
namespace pool {
__attribute__((noinline)) void *grab(size_t n)
{
	void *p = ::operator new(n);
	KEEP_FRAME();
	return p;
}
}
#define GRAB(n) pool::grab(n)
#else
#define GRAB(n) xmalloc(n)	/* the same bytes in C, through a known wrapper */
#endif

static volatile size_t small = 40;	/* not a constant to the compiler */
static int lines[5];
static void *volatile kept[2][6];	/* stored: no call becomes a tail call */
static ucontext_t main_context, coroutine;

static void calls(int round)
{
	lines[0] = __LINE__ + 1;
	kept[round][0] = xmalloc(small);
	lines[1] = __LINE__ + 1;
	kept[round][1] = xmalloc(100000);
	lines[2] = __LINE__ + 1;
	kept[round][2] = xcalloc(2, small);
	lines[3] = __LINE__ + 2;
	for (int i = 3; i < 5; i++)	/* one row, two calls */
		kept[round][i] = xstrdup("wrapped");
	lines[4] = __LINE__ + 1;
	kept[round][5] = GRAB(1000);
}

static void *on_thread(void *arg)
{
	(void)arg;
	calls(0);
	return NULL;
}

static void on_coroutine(void)
{
	calls(1);
	swapcontext(&coroutine, &main_context);
}

/* size bytes of stack with an unmapped page right above them, or null. */
static char *stack_below_a_hole(size_t size)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	char *m = (char *)mmap(NULL, size + page, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
	if (m == MAP_FAILED || munmap(m + size, page) != 0)
		return NULL;
	return m;
}

int main(void)
{
	size_t size = 256 * 1024, least = PTHREAD_STACK_MIN;
	char *thread_stack = stack_below_a_hole(least), *coroutine_stack = stack_below_a_hole(size);
	pthread_attr_t attr;
	pthread_t t;
	if (!thread_stack || !coroutine_stack || pthread_attr_init(&attr) != 0 ||
	    pthread_attr_setstack(&attr, thread_stack, least) != 0 ||
	    pthread_create(&t, &attr, on_thread, NULL) != 0 || pthread_join(t, NULL) != 0) {
		perror("known_wrappers_prog: the thread");
		return 1;
	}
	if (getcontext(&coroutine) != 0) {
		perror("known_wrappers_prog: getcontext");
		return 1;
	}
	coroutine.uc_stack.ss_sp = coroutine_stack;
	coroutine.uc_stack.ss_size = size;
	coroutine.uc_link = &main_context;
	makecontext(&coroutine, on_coroutine, 0);
	if (swapcontext(&main_context, &coroutine) != 0) {
		perror("known_wrappers_prog: swapcontext");
		return 1;
	}
	printf("lines malloc=%d big=%d calloc=%d strdup=%d grab=%d\n", lines[0], lines[1],
	       lines[2], lines[3], lines[4]);
	fflush(stdout);
	allocinfo_print(STDOUT_FILENO);
	return 0;
}
