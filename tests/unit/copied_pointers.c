/* SPDX-License-Identifier: MIT */
/*
 * A library that hands out the allocator's functions as data, as libxml2 does
 * (xmlFree, xmlMalloc, xmlRealloc): words that its relocations set to free, malloc and
 * realloc, which a program refers to (underneath_copied.c). A program built as a PIE
 * or without -fPIC gets each as a copy (R_X86_64_COPY), made by the loader from this
 * library's words, and the library's own code uses the copy too.
 */
#include <stdlib.h>

void (*lib_free)(void *) = free;
void *(*lib_malloc)(size_t) = malloc;
void *(*lib_realloc)(void *, size_t) = realloc;

struct lib_hooks {
	int version;
	void *(*alloc)(size_t);
	void (*release)(void *);
};
struct lib_hooks lib_hooks = { 1, malloc, free };

/* The library's own frees, through its words (xmlFreeDoc calls xmlFree). */
void lib_release(void *p)
{
	lib_free(p);
}

void lib_release_hooked(void *p)
{
	lib_hooks.release(p);
}
