/* SPDX-License-Identifier: MIT */
/*
 * libc functions that a forked child calls before the parent ever did, declared to
 * be called through their GOT entries, which the loader fills at start-up. Through
 * a PLT stub, each child would bind them again: a symbol lookup in the loader, and a
 * dozen page faults on loader and symbol-table pages that fork does not copy.
 */
#ifndef ALLOCINFO_BOUND_AT_LOAD_H
#define ALLOCINFO_BOUND_AT_LOAD_H

#include <pthread.h>
#include <stddef.h>

extern "C" {
void *mremap(void *, size_t, size_t, int, ...) noexcept __attribute__((noplt));
int pthread_mutex_init(pthread_mutex_t *, const pthread_mutexattr_t *) noexcept
	__attribute__((noplt));
}

#endif
