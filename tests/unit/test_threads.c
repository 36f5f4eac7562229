/* SPDX-License-Identifier: MIT */
/*
 * Many threads do a random mix of mallocs, frees and reallocs on many call sites,
 * freeing what other threads allocated. Afterwards every site's counters equal what a
 * model of the same operations predicts: the sum over the allocations still live.
 */
#include <allocinfo.h>

#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "site_report.h"

#define NR_THREADS 8
#define OPS_PER_THREAD 200000
#define POOL 4096
#define NR_SITES 8

/* A live allocation as the model sees it. */
struct live {
	void *p;
	size_t size;
	int site;
};

static struct live pool[POOL];
static pthread_mutex_t pool_lock[64];
static int site_line[NR_SITES];
static int recording = 1;	/* lines are recorded before the workers start */

/* Eight distinct call sites; the line of each is recorded on first use. */
static void *alloc_at(int site, size_t n)
{
	switch (site) {
#define SITE(k) case k: if (recording) site_line[k] = __LINE__; return malloc(n);
	SITE(0)
	SITE(1)
	SITE(2)
	SITE(3)
#undef SITE
	case 4: if (recording) site_line[4] = __LINE__; return calloc(1, n);
	case 5: if (recording) site_line[5] = __LINE__; return aligned_alloc(64, n);
	case 6: if (recording) site_line[6] = __LINE__; return memalign(128, n);
	default: return malloc(n);
	}
}

static void *realloc_at(void *p, size_t n)
{
	if (recording)
		site_line[7] = __LINE__ + 1;
	return realloc(p, n);
}

static uint64_t next_random(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static void *worker(void *arg)
{
	uint64_t seed = 0x9e3779b97f4a7c15ull * ((uintptr_t)arg + 1);
	int ops = getenv("ALLOCINFO_TORTURE") ? 50 * OPS_PER_THREAD : OPS_PER_THREAD;
	for (int i = 0; i < ops; i++) {
		uint64_t r = next_random(&seed);
		size_t slot = r % POOL;
		pthread_mutex_t *lk = &pool_lock[slot % 64];
		size_t size = (r >> 20) % 700;
		int site = (int)((r >> 40) % (NR_SITES - 1));
		pthread_mutex_lock(lk);
		struct live *e = &pool[slot];
		if (!e->p) {
			e->p = alloc_at(site, size);
			e->size = size;
			e->site = site;
		} else if ((r >> 60) < 4 && e->site < 4) {
			/* realloc moves the allocation to site 7 (plain blocks only) */
			void *q = realloc_at(e->p, size + 1);
			if (q) {
				e->p = q;
				e->size = size + 1;
				e->site = 7;
			}
		} else {
			free(e->p);	/* often allocated by another thread */
			e->p = NULL;
		}
		pthread_mutex_unlock(lk);
	}
	return NULL;
}

static void test_threads_match_model(void **state)
{
	for (int i = 0; i < 64; i++)
		pthread_mutex_init(&pool_lock[i], NULL);
	/* touch every site once so that its line is known and it is registered */
	for (int s = 0; s < NR_SITES; s++)
		free(alloc_at(s, 1));
	free(realloc_at(NULL, 1));
	recording = 0;

	pthread_t t[NR_THREADS];
	for (intptr_t i = 0; i < NR_THREADS; i++)
		assert_int_equal(pthread_create(&t[i], NULL, worker, (void *)i), 0);
	for (int i = 0; i < NR_THREADS; i++)
		pthread_join(t[i], NULL);

	long long bytes[NR_SITES] = { 0 };
	unsigned long long calls[NR_SITES] = { 0 };
	for (int i = 0; i < POOL; i++)
		if (pool[i].p) {
			bytes[pool[i].site] += (long long)pool[i].size;
			calls[pool[i].site]++;
		}
	for (int s = 0; s < NR_SITES; s++) {
		const char *fn = s == 7 ? "realloc_at" : "alloc_at";
		assert_site(__FILE__, site_line[s], fn, bytes[s], calls[s]);
	}
	for (int i = 0; i < POOL; i++)
		free(pool[i].p);
	for (int s = 0; s < NR_SITES; s++)
		assert_site(__FILE__, site_line[s], s == 7 ? "realloc_at" : "alloc_at", 0, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_threads_match_model),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
