/* SPDX-License-Identifier: MIT */
/* Strict C11 that chooses X/Open itself (as zstd's c99build does), through allocinfo-cc. */
#define _XOPEN_SOURCE 700
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

int use(void);
int use(void)
{
	char *s = strdup("abc");
	int r = strcasecmp(s, "ABC") + (int)getpid();
	void *p = NULL;
	if (posix_memalign(&p, 64, 100) == 0)
		free(p);
	free(s);
	return r;
}
