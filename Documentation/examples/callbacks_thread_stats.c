/* SPDX-License-Identifier: MIT */
/*
 * Example callback library: per-thread allocation statistics, printed at exit.
 *
 *   ALLOCINFO_CALLBACKS=./libcallbacks_thread_stats.so ./program
 *
 * Each thread counts, in its own thread-local block (no lock, no shared cache line),
 * the allocations, reallocs and frees it makes and their bytes; at exit one line per
 * thread, numbered in the order of their first call:
 *
 *   thread 1 (main): 12 allocations (3400 bytes), 1 reallocs (500 bytes), 10 frees (3000 bytes)
 *
 * Allocations and reallocs count the bytes asked for; frees the bytes the block was
 * allocated with, which the event carries (0 for a block made with counting off).
 *
 * Build: cc -shared -fPIC -o libcallbacks_thread_stats.so callbacks_thread_stats.c
 */
#define _GNU_SOURCE
#include <allocinfo.h>

#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

struct thread_stats {
	struct thread_stats *next;
	int number;
	char name[16];
	unsigned long long allocs, alloc_bytes, reallocs, realloc_bytes, frees, free_bytes;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;	/* the list and numbering */
static struct thread_stats *all, **tail = &all;
static int threads;
/* Initial-exec: in a library loaded with dlopen, the default model would allocate
 * each thread's copy on first use. */
static __thread struct thread_stats *mine __attribute__((tls_model("initial-exec")));

/* This thread's block, made on its first call: calloc() inside a callback is counted
 * but calls no callback. Blocks stay after their thread exits, for the summary. */
static struct thread_stats *stats(void)
{
	if (mine)
		return mine;
	struct thread_stats *s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	pthread_getname_np(pthread_self(), s->name, sizeof(s->name));
	pthread_mutex_lock(&lock);
	s->number = ++threads;
	*tail = s;
	tail = &s->next;
	pthread_mutex_unlock(&lock);
	return mine = s;
}

/* Frees before the call, while the block is there. */
static void count_pre(void *user_data, struct allocinfo_event *e)
{
	(void)user_data;
	struct thread_stats *s = stats();
	if (!s)
		return;
	s->frees++;
	s->free_bytes += e->size;
}

/* Allocations after the call, when it succeeded. */
static void count_post(void *user_data, struct allocinfo_event *e)
{
	(void)user_data;
	struct thread_stats *s;
	if (!e->ptr || !(s = stats()))
		return;
	if (e->op == ALLOCINFO_OP_REALLOC) {
		s->reallocs++;
		s->realloc_bytes += e->size;
	} else {
		s->allocs++;
		s->alloc_bytes += e->size;
	}
}

__attribute__((destructor)) static void print_stats(void)
{
	char line[256];
	pthread_mutex_lock(&lock);
	for (struct thread_stats *s = all; s; s = s->next) {
		int n = snprintf(line, sizeof(line),
				 "thread %d (%s): %llu allocations (%llu bytes), %llu reallocs "
				 "(%llu bytes), %llu frees (%llu bytes)\n", s->number, s->name,
				 s->allocs, s->alloc_bytes, s->reallocs, s->realloc_bytes, s->frees,
				 s->free_bytes);
		if (n > 0)
			(void)!write(STDERR_FILENO, line, (size_t)n);
	}
	pthread_mutex_unlock(&lock);
}

int allocinfo_callbacks_init(void);
int allocinfo_callbacks_init(void)
{
	const unsigned frees = 1u << ALLOCINFO_OP_FREE | 1u << ALLOCINFO_OP_DELETE;
	struct allocinfo_callbacks pre = { .size = sizeof(pre), .ops = frees, .pre = count_pre };
	struct allocinfo_callbacks post = {
		.size = sizeof(post),
		.ops = ALLOCINFO_OPS_ALL & ~frees & ~(1u << ALLOCINFO_OP_USABLE_SIZE),
		.post = count_post,
	};
	int h = allocinfo_callbacks_add(&pre);
	if (h >= 0)
		h = allocinfo_callbacks_add(&post);
	return h < 0 ? h : 0;
}
