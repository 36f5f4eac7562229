/* SPDX-License-Identifier: MIT */
/* git's DEVELOPER=1 style: its own feature macros, with values, and
 * -Wdeclaration-after-statement -Werror, through allocinfo-cc. */
#define _XOPEN_SOURCE 600
#define _DEFAULT_SOURCE 1
#define _GNU_SOURCE 1
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int use(int n);
int use(int n)
{
	char *a, *b;
	n++;
	a = malloc(n);
	b = strdup("x");
	a = realloc(a, n * 2);
	free(b);
	free(a);
	return n;
}
