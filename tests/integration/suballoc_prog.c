/* SPDX-License-Identifier: MIT */
/*
 * Allocates from the pool fixture (suballoc_pool.c, in a library or in the program)
 * on three lines, gives some blocks back, prints the lines and the pool's own count
 * of blocks out, then its report.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <unistd.h>

#include "suballoc_pool.h"

int main(void)
{
	struct pool *pl = pool_create();
	void *keep[8];
	int l_three = __LINE__ + 2;
	for (int i = 0; i < 3; i++)
		keep[i] = pool_alloc(pl, 100);
	int l_one = __LINE__ + 1;
	keep[3] = pool_alloc(pl, 40);
	int l_gone = __LINE__ + 1;
	void *gone = pool_alloc(pl, 500);
	pool_free(pl, gone);
	int out = pool_free(pl, keep[0]);	/* the pool's answer passes through */
	printf("lines three=%d one=%d gone=%d out=%d\n", l_three, l_one, l_gone, out);
	fflush(stdout);
	ssize_t (*print)(int) = (ssize_t (*)(int))dlsym(RTLD_DEFAULT, "allocinfo_print");
	if (print)
		print(STDOUT_FILENO);
	for (int i = 1; i < 4; i++)
		pool_free(pl, keep[i]);
	return 0;
}
