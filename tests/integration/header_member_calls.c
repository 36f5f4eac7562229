/* SPDX-License-Identifier: MIT */
/*
 * Structures whose members are named malloc, calloc, realloc and strdup and take
 * other arguments than the functions (PCRE2's memctl->malloc(size, data), yyjson's
 * alc->realloc(ctx, p, old, size)): their calls compile unchanged with the header, C
 * and C++, and only the calls of the functions themselves are tagged.
 */
#define _POSIX_C_SOURCE 200809L	/* strdup, under -std=c89 too */
#include <stdlib.h>
#include <string.h>

struct memctl {
	void *(*malloc)(size_t, void *);
	void *(*calloc)(size_t, size_t, void *);
	void *(*realloc)(void *, void *, size_t, size_t);
	char *(*strdup)(const char *, void *);
	void (*free)(void *, void *);
	void *data;
};

static void *ctl_malloc(size_t n, void *data)
{
	(void)data;
	return malloc(n);
}

static void *ctl_calloc(size_t n, size_t s, void *data)
{
	(void)data;
	return calloc(n, s);
}

static void *ctl_realloc(void *ctx, void *p, size_t old, size_t n)
{
	(void)ctx;
	(void)old;
	return realloc(p, n);
}

static char *ctl_strdup(const char *s, void *data)
{
	(void)data;
	return strdup(s);
}

static void ctl_free(void *p, void *data)
{
	(void)data;
	free(p);
}

int header_member_calls(void);
int header_member_calls(void)
{
	struct memctl m;
	struct memctl *ctl = &m;
	char *p, *s;
	m.malloc = ctl_malloc;
	m.calloc = ctl_calloc;
	m.realloc = ctl_realloc;
	m.strdup = ctl_strdup;
	m.free = ctl_free;
	m.data = NULL;
	p = (char *)ctl->malloc(100, ctl->data);
	p = (char *)ctl->realloc(NULL, p, 100, 200);
	ctl->free(p, ctl->data);
	p = (char *)m.calloc(3, 4, m.data);
	s = ctl->strdup("text", ctl->data);
	ctl->free(s, NULL);
	ctl->free(p, NULL);
	return 0;
}
