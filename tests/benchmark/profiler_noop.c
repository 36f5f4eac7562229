/* SPDX-License-Identifier: MIT */
/*
 * A library for `make bench` (loaded with ALLOCINFO_CALLBACKS, which calls its init):
 * attaches and starts a profiler whose callbacks do nothing, sampling every
 * BENCH_PROFILE_RATE bytes (default 512 KiB), with 16 bytes of sample data, so that a
 * run measures the sampler's own cost: the countdown, sampled blocks and their stacks.
 */
#include <allocinfo.h>

#include <stdlib.h>

static size_t on_alloc(void *arg, const struct allocinfo_sample *s)
{
	(void)arg;
	(void)s;
	return 0;
}

static void on_free(void *arg, void *block, size_t size, void *data)
{
	(void)arg;
	(void)block;
	(void)size;
	(void)data;
}

int allocinfo_callbacks_init(void);
int allocinfo_callbacks_init(void)
{
	const char *v = getenv("BENCH_PROFILE_RATE");
	struct allocinfo_profiler p = { 0 };
	p.sample_data_size = 16;
	p.initial_sample_rate = v ? strtoul(v, NULL, 0) : 0;
	p.on_alloc = on_alloc;
	p.on_free = on_free;
	int r = allocinfo_profiler_attach(&p, NULL);
	return r ? r : allocinfo_profiler_start();
}
