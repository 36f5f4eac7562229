/* SPDX-License-Identifier: MIT */
/*
 * What the reference shims (record_only.c, trailer_only.c) stand on: glibc's
 * allocator beneath the malloc family they export. Each includes shim_derived.h at
 * its end for the entry points that reduce to its own.
 */
#ifndef SHIM_H
#define SHIM_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#define VISIBLE __attribute__((visibility("default")))

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);
extern void __libc_free(void *);

#endif
