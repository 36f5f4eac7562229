/* SPDX-License-Identifier: MIT */
/* A file that declares calloc() itself, as redis's server.h does: the header cannot
 * compile it, so allocinfo-cc compiles it without (caller tags). */
#include <stddef.h>

void *calloc(size_t count, size_t size) __attribute__((deprecated));
void *malloc(size_t size);
void free(void *p);

int use(void);
int use(void)
{
	void *p = malloc(10);
	free(p);
	return 0;
}
