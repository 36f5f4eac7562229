/* SPDX-License-Identifier: MIT */
/*
 * Calls the wrapper fixture (wrappers_lib.c) through its table of function pointers,
 * after loading it with dlopen as interpreters load their extensions, and through a
 * wrapper of its own; prints the lines of the calls, then its report.
 * Usage: wrappers_prog LIBRARY
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "wrappers_lib.h"

#define KEEP_FRAME() __asm__ volatile("" ::: "memory")

/* The program's own wrapper, found in its .symtab. */
__attribute__((noinline)) static void *prog_xmalloc(size_t n)
{
	void *p = malloc(n);
	if (!p)
		abort();
	KEEP_FRAME();
	return p;
}

int main(int argc, char **argv)
{
	if (argc != 2)
		return 2;
	void *lib = dlopen(argv[1], RTLD_NOW);
	const struct fix_ops *ops = lib ? (const struct fix_ops *)dlsym(lib, "fix_ops") : NULL;
	if (!ops) {
		fprintf(stderr, "cannot load %s: %s\n", argv[1], dlerror());
		return 1;
	}
	void *keep[16];
	int n = 0;
	int l_alloc = __LINE__ + 2;
	for (int i = 0; i < 3; i++)
		keep[n++] = ops->alloc(100);
	int l_alloc2 = __LINE__ + 2;
	for (int i = 0; i < 2; i++)
		keep[n++] = ops->alloc2(1000);
	int l_strdup = __LINE__ + 1;
	keep[n++] = ops->dup("seven!");
	int l_realloc = __LINE__ + 1;
	keep[n] = ops->resize(NULL, 40);
	keep[n] = ops->resize(keep[n], 4000);
	n++;
	int l_own = __LINE__ + 1;
	keep[n++] = prog_xmalloc(5000);
	free(ops->alloc2(77));	/* gone: in no row */
	printf("lines alloc=%d alloc2=%d strdup=%d realloc=%d own=%d\n", l_alloc, l_alloc2,
	       l_strdup, l_realloc, l_own);
	fflush(stdout);
	ssize_t (*print)(int) = (ssize_t (*)(int))dlsym(RTLD_DEFAULT, "allocinfo_print");
	if (print)
		print(STDOUT_FILENO);
	for (int i = 0; i < n; i++)
		free(keep[i]);
	return 0;
}
