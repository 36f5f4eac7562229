/* SPDX-License-Identifier: MIT */
/*
 * The file behind a store and the one descriptor the library keeps for it.
 *
 * By default a store is an anonymous memfd named "allocinfo-store": it dies with the
 * last process that maps it, however that process ends (_exit, a signal, exec), so
 * nothing is ever left behind. Readers find it through /proc/PID/fd, which is why
 * the library keeps one descriptor open: close-on-exec, placed at STORE_FD_MIN or
 * above, out of the way of the small numbers programs expect to be free. With
 * ALLOCINFO_STORE_DIR set, the store is instead a file named allocinfo-<pid> in that
 * directory (private test setups): removed at exit, and by `allocinfo --gc` after a
 * process that could not remove it; no descriptor is kept for it.
 *
 * Called from inside the first malloc and from fork handlers: system calls only.
 */
#ifndef ALLOCINFO_STORE_FILE_H
#define ALLOCINFO_STORE_FILE_H

#include <stddef.h>
#include <sys/types.h>

#include "internal.h"

namespace allocinfo {

/* The memfd's name, as readers see it in /proc/PID/fd: "/memfd:allocinfo-store (deleted)". */
#define ALLOCINFO_STORE_MEMFD_NAME "allocinfo-store"
/* The lowest descriptor number the kept descriptor takes (when the limit allows). */
constexpr int STORE_FD_MIN = 1000;

/* $ALLOCINFO_STORE_DIR when set to an absolute path (and not in a secure-execution
 * process), else nullptr: the store is a memfd. */
const char *store_dir() HIDDEN;

/*
 * Creates a fresh store file of `size` bytes for pid: a memfd (path set to ""), or
 * the file in store_dir() (its path in path, replacing any older one of that pid).
 * Returns its descriptor (close-on-exec), or -1 with errno set.
 */
int store_file_open(pid_t pid, size_t size, char *path, size_t path_len) HIDDEN;

/* After mapping a file from store_file_open(): keeps the descriptor of a memfd for
 * readers (moved to STORE_FD_MIN or above, and remembered), closes that of a named
 * file. */
void store_file_keep(int fd, const char *path) HIDDEN;

/* In a forked child, after mapping its own new file: the same as store_file_keep(),
 * except that the new memfd takes the number of the descriptor inherited from the
 * parent when that number still holds the parent's store (the program may have
 * closed or reused it since: then it is left alone). */
void store_file_keep_child(int fd, const char *path) HIDDEN;

/* In a forked child left without a store file of its own: closes the inherited
 * descriptor if it still holds the parent's store, so no reader takes the parent's
 * store for the child's. */
void store_file_drop_inherited() HIDDEN;

/* The kept descriptor, -1 when none. */
int store_file_fd() HIDDEN;

} /* namespace allocinfo */

#endif
