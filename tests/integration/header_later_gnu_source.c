/* SPDX-License-Identifier: MIT */
/* A file that asks for GNU extensions itself, compiled with -include allocinfo.h. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <string.h>

int use(void)
{
	char *s;
	if (asprintf(&s, "%s", strerror(1)) < 0)
		return -1;
	pthread_setname_np(pthread_self(), "x");
	return (int)strlen(s);
}
