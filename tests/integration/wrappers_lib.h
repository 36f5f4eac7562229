/* SPDX-License-Identifier: MIT */
/* The wrapper fixture's table of function pointers (wrappers_lib.c). */
#ifndef WRAPPERS_LIB_H
#define WRAPPERS_LIB_H

#include <stddef.h>

struct fix_ops {
	void *(*alloc)(size_t n);		/* one level over malloc */
	void *(*alloc2)(size_t n);		/* two levels */
	void *(*resize)(void *p, size_t n);
	char *(*dup)(const char *s);		/* three levels */
};

#endif
