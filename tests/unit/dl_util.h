/* SPDX-License-Identifier: MIT */
/* Test helpers: loading the test plugin, and reading this process's store header. */
#ifndef ALLOCINFO_TEST_DL_UTIL_H
#define ALLOCINFO_TEST_DL_UTIL_H

#include <dlfcn.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

struct plugin {
	void *handle;
	void *(*alloc)(size_t);
	char *(*dup)(const char *);
	void (*release)(void *);
	int malloc_line;
	int strdup_line;
};

/* Loads $PLUGIN (the built libplugin.so); 0 on success. */
static inline int plugin_open(struct plugin *p)
{
	const char *path = getenv("PLUGIN");
	if (!path)
		return -1;
	p->handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!p->handle) {
		fprintf(stderr, "dlopen %s: %s\n", path, dlerror());
		return -1;
	}
	p->alloc = (void *(*)(size_t))dlsym(p->handle, "plugin_alloc");
	p->dup = (char *(*)(const char *))dlsym(p->handle, "plugin_strdup");
	p->release = (void (*)(void *))dlsym(p->handle, "plugin_free");
	const int *ml = (const int *)dlsym(p->handle, "plugin_malloc_line");
	const int *sl = (const int *)dlsym(p->handle, "plugin_strdup_line");
	if (!p->alloc || !p->dup || !p->release || !ml || !sl)
		return -1;
	p->malloc_line = *ml;
	p->strdup_line = *sl;
	return 0;
}

#endif
