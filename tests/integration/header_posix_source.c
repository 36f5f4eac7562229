/* SPDX-License-Identifier: MIT */
/* Strict C99 that chooses POSIX itself (as redis's hiredis does), through allocinfo-cc:
 * struct sigaction, fileno() and strdup() must be declared. */
#define _POSIX_C_SOURCE 200809L
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int use(void);
int use(void)
{
	struct sigaction sa;
	char *s;
	memset(&sa, 0, sizeof(sa));
	s = strdup("x");
	free(s);
	s = strndup("xyz", 2);
	free(s);
	return fileno(stdout) + (int)sizeof(sa);
}
