/* SPDX-License-Identifier: MIT */
/* A plugin built with allocinfo.h and loaded with dlopen by the tests. */
#include <allocinfo.h>

#include <string.h>

const int plugin_malloc_line = __LINE__ + 3;
void *plugin_alloc(size_t n)
{
	return malloc(n);
}

const int plugin_strdup_line = __LINE__ + 3;
char *plugin_strdup(const char *s)
{
	return strdup(s);
}

void plugin_free(void *p)
{
	free(p);
}
