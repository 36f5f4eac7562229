/* SPDX-License-Identifier: MIT */
/*
 * Holds blocks for `allocinfo -p PID --addr` and `--by allocator`: prints their
 * addresses and lines (two of them a pool's, named "arena"), and addresses that are
 * not live counted blocks, then waits for its stdin to close.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char static_data[64];
static char arena[4096] __attribute__((aligned(16)));	/* a pool's memory: no malloc */

int main(void)
{
	char stack[64];
	int l_small = __LINE__ + 1;
	char *small = malloc(100);
	int l_big = __LINE__ + 1;
	char *big = malloc(5000);
	int l_aligned = __LINE__ + 1;
	char *aligned = aligned_alloc(4096, 8192);
	char *freed = malloc(3000);
	char *after = malloc(5000);	/* keeps the freed chunk from the top (and reuse) */
	free(freed);
	struct allocinfo_allocator *pool = allocinfo_allocator_create("arena");
	int l_pool = __LINE__ + 1;
	alloc_hooks(allocinfo_charge(pool, arena, 100));
	alloc_hooks(allocinfo_charge(pool, arena + 112, 200));
	memset(stack, 0, sizeof(stack));
	printf("pid %d small %p %d big %p %d aligned %p %d freed %p stack %p static %p "
	       "pool %p %d\n", (int)getpid(), (void *)small, l_small, (void *)big, l_big,
	       (void *)aligned, l_aligned, (void *)freed, (void *)stack, (void *)static_data,
	       (void *)arena, l_pool);
	fflush(stdout);
	char c;
	while (read(STDIN_FILENO, &c, 1) > 0)
		;
	free(small);
	free(big);
	free(aligned);
	free(after);
	return stack[0];
}
