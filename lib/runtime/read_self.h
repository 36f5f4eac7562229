/* SPDX-License-Identifier: MIT */
/*
 * Reading this process's own memory where it may not be mapped: process_vm_readv()
 * on itself fails with EFAULT instead of faulting. For allocinfo_pointer_info(),
 * which may be asked about any address, and for the bytes below a pointer that
 * starts a page (page_starts.cpp).
 */
#ifndef ALLOCINFO_READ_SELF_H
#define ALLOCINFO_READ_SELF_H

#include <errno.h>
#include <stddef.h>
#include <sys/uio.h>
#include <unistd.h>

namespace allocinfo {

/* Copies len bytes at addr into buf: 0, or the errno of the failure (EFAULT: not
 * readable there; others, such as EPERM from a sandbox, say nothing about addr).
 * errno is the program's and stays as it was. */
static inline int read_self(const void *addr, void *buf, size_t len)
{
	int saved = errno;
	struct iovec local = { buf, len };
	struct iovec remote = { const_cast<void *>(addr), len };
	ssize_t got = process_vm_readv(getpid(), &local, 1, &remote, 1, 0);
	int err = got == (ssize_t)len ? 0 : got < 0 ? errno : EFAULT;
	errno = saved;
	return err;
}

} /* namespace allocinfo */

#endif
