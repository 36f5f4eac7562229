/* SPDX-License-Identifier: MIT */
/* Strict C99 that asks for GNU extensions itself, through allocinfo-cc: qsort_r(),
 * asprintf() and the header's own use of the C library must all be declared. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp(const void *a, const void *b, void *arg)
{
	(void)arg;
	return *(const int *)a - *(const int *)b;
}

int use(void);
int use(void)
{
	int v[3] = { 3, 1, 2 };
	char *s;
	qsort_r(v, 3, sizeof(int), cmp, NULL);
	if (asprintf(&s, "%d", v[0]) < 0)
		return -1;
	free(s);
	s = strndup("abc", 2);
	free(s);
	return (int)strlen("x");
}
