/* SPDX-License-Identifier: MIT */
/*
 * A callback library for `make bench` (ALLOCINFO_CALLBACKS): BENCH_CALLBACKS pairs
 * (default 1) of empty pre and post callbacks for every operation, so that the pair's
 * cost is the chain's alone.
 */
#include <allocinfo.h>

static void nothing(void *user_data, struct allocinfo_event *e)
{
	(void)user_data;
	(void)e;
}

int allocinfo_callbacks_init(void);
int allocinfo_callbacks_init(void)
{
	const char *v = getenv("BENCH_CALLBACKS");
	int n = v ? atoi(v) : 1;
	for (int i = 0; i < n; i++) {
		struct allocinfo_callbacks cb = { sizeof(cb), 0, nothing, nothing, NULL };
		int h = allocinfo_callbacks_add(&cb);
		if (h < 0)
			return h;
	}
	return 0;
}
