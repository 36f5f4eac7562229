/* SPDX-License-Identifier: MIT */
/* A pool allocator that never calls malloc (suballoc_pool.c): the fixture of
 * ALLOCINFO_SUBALLOC_FNS and allocinfo-cc's --allocinfo-suballoc-fns. */
#ifndef SUBALLOC_POOL_H
#define SUBALLOC_POOL_H

#include <stddef.h>

struct pool;

struct pool *pool_create(void);
/* n bytes from pool pl, 16-byte aligned; null when the pool is spent. */
void *pool_alloc(struct pool *pl, size_t n);
/* Gives p back to pl; returns how many blocks pl still has out. */
int pool_free(struct pool *pl, void *p);

#endif
