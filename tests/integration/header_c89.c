/* SPDX-License-Identifier: MIT */
/* C89, pedantic, every warning an error (cJSON's flags), through allocinfo-cc. */
#include <stdlib.h>
#include <string.h>

int use(void);
int use(void)
{
	char *p = (char *)malloc(10);
	char *q;
	if (!p)
		return 0;
	q = (char *)calloc(2, 5);
	p = (char *)realloc(p, 20);
	strcpy(p, "x");
	free(q);
	free(p);
	return 1;
}
