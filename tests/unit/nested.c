/* SPDX-License-Identifier: MIT */
/* A library whose destructor unloads another one, the plugin its constructor loaded:
 * a dlclose() inside dlclose(), for test_dlopen. */
#include <dlfcn.h>
#include <stdlib.h>

int nested_loaded(void);

static void *inner;

__attribute__((constructor)) static void open_inner(void)
{
	const char *path = getenv("PLUGIN");
	if (path)
		inner = dlopen(path, RTLD_NOW | RTLD_LOCAL);
}

__attribute__((destructor)) static void close_inner(void)
{
	if (inner)
		dlclose(inner);
}

int nested_loaded(void)
{
	return inner != NULL;
}
