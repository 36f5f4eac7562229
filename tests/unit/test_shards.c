/* SPDX-License-Identifier: MIT */
/*
 * Counter shards belong to threads: a thread takes one at its first counted
 * allocation and gives it back when it exits. These tests read the store's header
 * (nr_cpus shards, shards_used) next to the report:
 *  - threads that come and go one after another reuse one shard;
 *  - more threads alive at once than there are thread shards still count exactly (the
 *    rest count in per-CPU shards), also when each frees what another allocated;
 *  - after fork, the child's threads take shards again and count exactly;
 *  - a thread's allocations made after its shard went back (in a later thread-exit
 *    destructor) are counted, and freed elsewhere, exactly;
 *  - a thread that found every shard taken gets one when another thread gives its
 *    back.
 */
#include <allocinfo.h>

#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/rseq.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "site_report.h"
#include "store_format.h"

/* This process's store file. */
static int open_store(void)
{
	const char *dir = getenv("ALLOCINFO_STORE_DIR");
	char path[512];
	snprintf(path, sizeof(path), "%s/allocinfo-%d", dir && dir[0] == '/' ? dir : "/dev/shm",
		 (int)getpid());
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	return fd;
}

/* This process's store header. */
static struct allocinfo_store_header read_header(void)
{
	struct allocinfo_store_header h;
	int fd = open_store();
	assert_int_equal(pread(fd, &h, sizeof(h), 0), (ssize_t)sizeof(h));
	close(fd);
	assert_memory_equal(h.magic, ALLOCINFO_STORE_MAGIC, sizeof(h.magic));
	return h;
}

/* The counters of the tag at `line` of this file, in shard `shard`. */
static struct allocinfo_counter shard_counter(int line, uint32_t shard)
{
	struct allocinfo_store_header h = read_header();
	struct allocinfo_counter c = { 0, 0 };
	int fd = open_store();
	for (uint32_t slot = ALLOCINFO_TAG_FIRST; slot < h.nr_tags; slot++) {
		struct allocinfo_store_tag t;
		char file[64] = "";
		assert_int_equal(pread(fd, &t, sizeof(t), (off_t)(h.tags_offset + slot * sizeof(t))),
				 (ssize_t)sizeof(t));
		if (!(t.flags & ALLOCINFO_TAGF_USED) || t.line != (uint32_t)line || !t.file_off)
			continue;
		assert_true(pread(fd, file, sizeof(file) - 1, (off_t)(h.strings_offset + t.file_off)) > 0);
		if (!strstr(file, "test_shards.c"))
			continue;
		assert_int_equal(pread(fd, &c, sizeof(c), (off_t)(h.counters_offset +
								  shard * h.cpu_stride + slot * sizeof(c))),
				 (ssize_t)sizeof(c));
		break;
	}
	close(fd);
	return c;
}

static int one_line;
static void *one_block(size_t n)
{
	one_line = __LINE__ + 1;
	return malloc(n);
}

static void *keep_one(void *arg)
{
	return one_block((size_t)(uintptr_t)arg);
}

/* 1000 threads, one after the other: each takes the shard the previous gave back. */
static void test_sequential_threads_reuse_a_shard(void **state)
{
	(void)state;
	free(one_block(1));	/* this thread has its shard */
	uint32_t before = read_header().shards_used;
	enum { N = 1000 };
	static void *kept[N];
	for (int i = 0; i < N; i++) {
		pthread_t t;
		assert_int_equal(pthread_create(&t, NULL, keep_one, (void *)(uintptr_t)(i % 7 + 1)), 0);
		assert_int_equal(pthread_join(t, &kept[i]), 0);
		assert_non_null(kept[i]);
	}
	assert_int_equal(read_header().shards_used, before + 1);

	long long bytes = 0;
	for (int i = 0; i < N; i++)
		bytes += i % 7 + 1;
	assert_site(__FILE__, one_line, "one_block", bytes, N);
	for (int i = 0; i < N; i++)
		free(kept[i]);
	assert_site(__FILE__, one_line, "one_block", 0, 0);
}

/* Threads alive at once: more than shards. Each allocates, then frees the blocks of
 * its neighbour, which may count in another thread's shard or in a CPU's. The shared
 * shard 0 (atomic adds) is left alone wherever rseq is registered. */
enum { PER_THREAD = 50 };
static int crowd_line;
static pthread_barrier_t crowd_ready, crowd_swapped;
static int crowd_size;
static void **crowd_blocks;	/* [crowd_size][PER_THREAD] */

static void *crowd_block(size_t n, int record_line)
{
	if (record_line)
		crowd_line = __LINE__ + 1;
	return malloc(n);
}

static void *crowd_worker(void *arg)
{
	int me = (int)(intptr_t)arg;
	for (int k = 0; k < PER_THREAD; k++)
		crowd_blocks[me * PER_THREAD + k] = crowd_block((size_t)(me + k + 1), me == 0 && k == 0);
	pthread_barrier_wait(&crowd_ready);
	/* the first half of the next thread's blocks */
	int other = (me + 1) % crowd_size;
	for (int k = 0; k < PER_THREAD / 2; k++) {
		free(crowd_blocks[other * PER_THREAD + k]);
		crowd_blocks[other * PER_THREAD + k] = NULL;
	}
	pthread_barrier_wait(&crowd_swapped);
	return NULL;
}

static void test_more_threads_than_shards(void **state)
{
	(void)state;
	struct allocinfo_store_header h = read_header();
	assert_true(h.nr_cpus >= 2);
	crowd_size = (int)h.nr_cpus + 20;
	crowd_blocks = calloc((size_t)crowd_size * PER_THREAD, sizeof(void *));
	assert_non_null(crowd_blocks);
	pthread_barrier_init(&crowd_ready, NULL, (unsigned)crowd_size);
	pthread_barrier_init(&crowd_swapped, NULL, (unsigned)crowd_size + 1);
	pthread_t *t = calloc((size_t)crowd_size, sizeof(pthread_t));
	assert_non_null(t);
	for (int i = 0; i < crowd_size; i++)
		assert_int_equal(pthread_create(&t[i], NULL, crowd_worker, (void *)(intptr_t)i), 0);

	/* All of them alive and done: every shard is taken. */
	pthread_barrier_wait(&crowd_swapped);
	assert_int_equal(read_header().shards_used, h.nr_cpus);
	long long bytes = 0;
	unsigned long long calls = 0;
	for (int me = 0; me < crowd_size; me++)
		for (int k = PER_THREAD / 2; k < PER_THREAD; k++) {
			bytes += me + k + 1;
			calls++;
		}
	assert_site(__FILE__, crowd_line, "crowd_block", bytes, calls);
	if (__rseq_size > 0) {
		struct allocinfo_counter in_shared = shard_counter(crowd_line, 0);
		assert_int_equal(in_shared.bytes, 0);
		assert_int_equal(in_shared.calls, 0);
	}

	for (int i = 0; i < crowd_size; i++)
		pthread_join(t[i], NULL);
	for (int i = 0; i < crowd_size * PER_THREAD; i++)
		free(crowd_blocks[i]);
	assert_site(__FILE__, crowd_line, "crowd_block", 0, 0);
	free(t);
	free(crowd_blocks);
	pthread_barrier_destroy(&crowd_ready);
	pthread_barrier_destroy(&crowd_swapped);
}

/* A thread-exit destructor that runs after the library's (its key is newer, and
 * glibc runs destructors in key order) allocates: that block is counted exactly, in a
 * CPU's shard and not in the shard the thread gave back, and freed by the main
 * thread. */
static int late_line;
static pthread_key_t late_key;
static void *late_block;

static void late_alloc(void *v)
{
	(void)v;
	late_line = __LINE__ + 1;
	late_block = malloc(333);
}

static void *late_worker(void *arg)
{
	(void)arg;
	free(malloc(8));	/* takes a shard, so the library's destructor has work */
	pthread_setspecific(late_key, (void *)1);
	return NULL;
}

static void test_allocation_after_thread_exit_hook(void **state)
{
	(void)state;
	assert_int_equal(pthread_key_create(&late_key, late_alloc), 0);
	for (int round = 0; round < 3; round++) {
		pthread_t t;
		assert_int_equal(pthread_create(&t, NULL, late_worker, NULL), 0);
		assert_int_equal(pthread_join(t, NULL), 0);
		assert_non_null(late_block);
		assert_site(__FILE__, late_line, "late_alloc", 333, 1);
		/* Not in a thread shard (the low ones; CPU shards are the last): the
		 * worker's went back before this destructor ran, and may have another
		 * owner by now, who adds without atomics. Those shards hold only the
		 * earlier rounds' frees, made by this thread. */
		int64_t bytes = 0, calls = 0;
		for (uint32_t shard = 1; shard < 16; shard++) {
			struct allocinfo_counter c = shard_counter(late_line, shard);
			bytes += c.bytes;
			calls += c.calls;
		}
		assert_int_equal(bytes, -333 * round);
		assert_int_equal(calls, -round);
		free(late_block);
		late_block = NULL;
		assert_site(__FILE__, late_line, "late_alloc", 0, 0);
	}
	pthread_key_delete(late_key);
}

/* fork while threads hold shards: the child's own threads count exactly. */
static int child_line;
static void *child_block(size_t n)
{
	child_line = __LINE__ + 1;
	return malloc(n);
}

static pthread_barrier_t child_alive;
static void *child_worker(void *arg)
{
	void *p = child_block((size_t)(uintptr_t)arg);
	pthread_barrier_wait(&child_alive);	/* all of them hold a shard at once */
	return p;
}

/* Takes a shard and keeps it until released; the barriers are set up by each test
 * for its number of holders. */
static pthread_barrier_t hold_ready, hold_release;
static void *holder(void *arg)
{
	(void)arg;
	free(malloc(16));
	pthread_barrier_wait(&hold_ready);
	pthread_barrier_wait(&hold_release);
	return NULL;
}

static void test_threads_of_a_forked_child(void **state)
{
	(void)state;
	const char *san = getenv("ALLOCINFO_SANITIZER");
	if (san && !strcmp(san, "thread"))
		skip();	/* ThreadSanitizer refuses threads after a multi-threaded fork */
	enum { HOLDERS = 6, CHILD_THREADS = 10 };
	pthread_t t[HOLDERS];
	pthread_barrier_init(&hold_ready, NULL, HOLDERS + 1);
	pthread_barrier_init(&hold_release, NULL, HOLDERS + 1);
	for (int i = 0; i < HOLDERS; i++)
		assert_int_equal(pthread_create(&t[i], NULL, holder, NULL), 0);
	pthread_barrier_wait(&hold_ready);

	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		/* The holders are gone here; their shards are free for these threads. */
		void *kept[CHILD_THREADS];
		pthread_barrier_init(&child_alive, NULL, CHILD_THREADS + 1);
		for (int round = 0; round < 2; round++) {
			pthread_t c[CHILD_THREADS];
			for (int i = 0; i < CHILD_THREADS; i++)
				if (pthread_create(&c[i], NULL, child_worker, (void *)(uintptr_t)(i + 1)))
					_exit(2);
			pthread_barrier_wait(&child_alive);
			/* Shard 0, this thread's, and one each: the holders' shards were
			 * reused, as their threads do not exist here. */
			if (read_header().shards_used > 2 + CHILD_THREADS)
				_exit(6);
			for (int i = 0; i < CHILD_THREADS; i++)
				if (pthread_join(c[i], &kept[i]) || !kept[i])
					_exit(3);
			struct site_counts s = site_lookup(__FILE__, child_line, "child_block");
			if (!s.found || s.bytes != 55 || s.calls != CHILD_THREADS)
				_exit(4);
			for (int i = 0; i < CHILD_THREADS; i++)
				free(kept[i]);
			s = site_lookup(__FILE__, child_line, "child_block");
			if (!s.found || s.bytes != 0 || s.calls != 0)
				_exit(5);
		}
		_exit(0);
	}
	int status;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);

	pthread_barrier_wait(&hold_release);
	for (int i = 0; i < HOLDERS; i++)
		pthread_join(t[i], NULL);
	pthread_barrier_destroy(&hold_ready);
	pthread_barrier_destroy(&hold_release);
}

/* Holders take every thread shard; a thread that then finds none counts elsewhere,
 * and takes a shard at its first allocation after the holders exited. Its blocks
 * stay exact across the change. */
static int wait_line;
static void *wait_block(size_t n)
{
	wait_line = __LINE__ + 1;
	return malloc(n);
}

static pthread_barrier_t waiter_first, waiter_second;

static void *waiter_first_block, *waiter_second_block;
static int waiter_had_shard_first, waiter_has_shard_second;
static void *waiter(void *arg)
{
	(void)arg;
	waiter_first_block = wait_block(10);
	waiter_had_shard_first = allocinfo__thread.shard != NULL;
	pthread_barrier_wait(&waiter_first);	/* the holders exit meanwhile */
	pthread_barrier_wait(&waiter_second);
	waiter_second_block = wait_block(20);
	waiter_has_shard_second = allocinfo__thread.shard != NULL;
	free(waiter_first_block);
	return NULL;
}

static void test_waiting_thread_gets_a_shard(void **state)
{
	(void)state;
	/* More holders than thread shards (nr_cpus counts every shard). */
	int holders = (int)read_header().nr_cpus;
	pthread_t *t = calloc((size_t)holders, sizeof(pthread_t));
	assert_non_null(t);
	pthread_barrier_init(&hold_ready, NULL, (unsigned)holders + 1);
	pthread_barrier_init(&hold_release, NULL, (unsigned)holders + 1);
	pthread_barrier_init(&waiter_first, NULL, 2);
	pthread_barrier_init(&waiter_second, NULL, 2);
	for (int i = 0; i < holders; i++)
		assert_int_equal(pthread_create(&t[i], NULL, holder, NULL), 0);
	pthread_barrier_wait(&hold_ready);

	pthread_t w;
	assert_int_equal(pthread_create(&w, NULL, waiter, NULL), 0);
	pthread_barrier_wait(&waiter_first);
	assert_false(waiter_had_shard_first);
	assert_site(__FILE__, wait_line, "wait_block", 10, 1);

	pthread_barrier_wait(&hold_release);
	for (int i = 0; i < holders; i++)
		pthread_join(t[i], NULL);
	pthread_barrier_wait(&waiter_second);
	pthread_join(w, NULL);
	assert_true(waiter_has_shard_second);
	assert_site(__FILE__, wait_line, "wait_block", 20, 1);
	free(waiter_second_block);
	assert_site(__FILE__, wait_line, "wait_block", 0, 0);

	free(t);
	pthread_barrier_destroy(&hold_ready);
	pthread_barrier_destroy(&hold_release);
	pthread_barrier_destroy(&waiter_first);
	pthread_barrier_destroy(&waiter_second);
}

int main(int argc, char **argv)
{
	(void)argc;
	/* The counters are read from the store file: a BPF store keeps them in a map. */
	if (!getenv("ALLOCINFO_STORE")) {
		setenv("ALLOCINFO_STORE", "shm", 1);
		execv("/proc/self/exe", argv);
		perror("test_shards: exec");
		return 1;
	}
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sequential_threads_reuse_a_shard),
		/* before any thread counts in a CPU's shard, which raises shards_used to all */
		cmocka_unit_test(test_threads_of_a_forked_child),
		cmocka_unit_test(test_allocation_after_thread_exit_hook),
		cmocka_unit_test(test_more_threads_than_shards),
		cmocka_unit_test(test_waiting_thread_gets_a_shard),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
