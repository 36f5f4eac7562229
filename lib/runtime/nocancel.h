/* SPDX-License-Identifier: MIT */
/*
 * The system calls the library makes from inside a program's calls (an allocation, a
 * free, fork, dlclose) without glibc's wrappers, which are cancellation points: a
 * thread with a cancellation request pending would act on it there, inside malloc or
 * free, and unwind out of the library with a lock held, a message unwritten, or an
 * abort not reached (a double free in a thread being cancelled went on silently where
 * glibc aborts). glibc's allocator makes its own with its *_nocancel functions for the
 * same reason. Made directly, they are not seen by the sanitizers' interceptors either.
 */
#ifndef ALLOCINFO_NOCANCEL_H
#define ALLOCINFO_NOCANCEL_H

#include <fcntl.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

namespace allocinfo {
namespace nocancel {

inline int openat(int dir, const char *path, int flags, mode_t mode = 0)
{
	return (int)syscall(SYS_openat, dir, path, flags, mode);
}

inline int open(const char *path, int flags, mode_t mode = 0)
{
	return openat(AT_FDCWD, path, flags, mode);
}

inline ssize_t read(int fd, void *buf, size_t n)
{
	return syscall(SYS_read, fd, buf, n);
}

inline ssize_t pread(int fd, void *buf, size_t n, off_t at)
{
	return syscall(SYS_pread64, fd, buf, n, at);
}

inline ssize_t write(int fd, const void *buf, size_t n)
{
	return syscall(SYS_write, fd, buf, n);
}

inline int close(int fd)
{
	return (int)syscall(SYS_close, fd);
}

inline int nanosleep(const struct timespec *want, struct timespec *left)
{
	return (int)syscall(SYS_nanosleep, want, left);
}

} /* namespace nocancel */
} /* namespace allocinfo */

#endif
