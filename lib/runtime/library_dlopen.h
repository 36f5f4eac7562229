/* SPDX-License-Identifier: MIT */
/*
 * dlopen() for the library's own loads, kept out of fork()'s way.
 *
 * glibc's fork() copies the dynamic loader's state as it stands and, in the child,
 * only resets the loader's lock: a child forked while another thread was inside
 * dlopen() inherits a half-made link map, and its own next dlopen() fails
 * ("undefined symbol") or stops the process on the loader's assertion that its list
 * is consistent. The library loads in threads the program did not ask for (the BPF
 * store's publisher, 10 ms after start-up; the unwinder at a thread's first walk),
 * so a program that forks early would meet this through no act of its own.
 *
 * Every such load holds one lock, and fork() waits for it (for at most
 * FORK_WAIT_NS). A child forked while a load could not be waited for (it took
 * longer, or the forking thread is itself inside one) never calls dlopen() from the
 * library: library_dlopen() fails there and library_dlerror() says why.
 */
#ifndef ALLOCINFO_LIBRARY_DLOPEN_H
#define ALLOCINFO_LIBRARY_DLOPEN_H

#include "internal.h"

namespace allocinfo {

void *library_dlopen(const char *path, int flags) HIDDEN;
/* Why the last library_dlopen() of this thread failed. */
const char *library_dlerror() HIDDEN;

/* From the library's fork handlers: first in prepare and in the child (which resets
 * the lock without waking anyone: before any thread of the child could wait on it),
 * last in the parent. */
void library_dlopen_fork_prepare() HIDDEN;
void library_dlopen_fork_parent() HIDDEN;
void library_dlopen_fork_child() HIDDEN;

} /* namespace allocinfo */

#endif
