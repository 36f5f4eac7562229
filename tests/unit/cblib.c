/* SPDX-License-Identifier: MIT */
/*
 * A callback library for ALLOCINFO_CALLBACKS: its init registers a callback that
 * counts the mallocs and frees it sees in cblib_calls; a negative CBLIB_INIT_RESULT
 * makes init fail with that value instead.
 */
#include <allocinfo.h>

long cblib_calls;

static void count(void *user_data, struct allocinfo_event *e)
{
	(void)user_data;
	(void)e;
	__atomic_add_fetch(&cblib_calls, 1, __ATOMIC_RELAXED);
}

int allocinfo_callbacks_init(void);
int allocinfo_callbacks_init(void)
{
	const char *fail = getenv("CBLIB_INIT_RESULT");
	if (fail)
		return atoi(fail);
	struct allocinfo_callbacks cb = {
		sizeof(cb), 1u << ALLOCINFO_OP_MALLOC | 1u << ALLOCINFO_OP_FREE, count, NULL, NULL,
	};
	int h = allocinfo_callbacks_add(&cb);
	return h < 0 ? h : 0;
}
