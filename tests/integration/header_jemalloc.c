/* SPDX-License-Identifier: MIT */
/* <jemalloc/jemalloc.h> declares the malloc family itself, after the header. */
#include <stdlib.h>
#include <jemalloc/jemalloc.h>

int use(void);
int use(void)
{
	void *p = malloc(10);
	free(p);
	return (int)sizeof(p);
}
