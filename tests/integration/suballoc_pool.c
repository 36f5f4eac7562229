/* SPDX-License-Identifier: MIT */
/* A bump allocator over a static arena, with no call to malloc: the blocks it hands
 * out are counted only through the descriptions of its functions. */
#include "suballoc_pool.h"

#include <stdint.h>

struct pool {
	_Alignas(16) unsigned char arena[1 << 16];
	size_t used;
	int out;
};

static struct pool the_pool;

struct pool *pool_create(void)
{
	return &the_pool;
}

void *pool_alloc(struct pool *pl, size_t n)
{
	size_t need = (n + 15) & ~(size_t)15;
	if (need > sizeof(pl->arena) - pl->used)
		return NULL;
	void *p = pl->arena + pl->used;
	pl->used += need ? need : 16;
	pl->out++;
	return p;
}

int pool_free(struct pool *pl, void *p)
{
	if (p)
		pl->out--;
	return pl->out;
}
