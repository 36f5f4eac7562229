/* SPDX-License-Identifier: MIT */
/*
 * Weak stand-ins for the sampling profiler's entry points (allocinfo.h), so that the
 * built-in pprof profiler links before the sampler does: each says the profiler is
 * not there. The sampler's definitions replace them.
 */
#include <errno.h>

#include "internal.h"

extern "C" {
EXPORT __attribute__((weak)) int allocinfo_profiler_attach(const struct allocinfo_profiler *,
							   void *)
{
	return -ENOSYS;
}
EXPORT __attribute__((weak)) int allocinfo_profiler_detach(void) { return -ENOENT; }
EXPORT __attribute__((weak)) int allocinfo_profiler_start(void) { return -ENOENT; }
EXPORT __attribute__((weak)) int allocinfo_profiler_stop(void) { return -ENOENT; }
EXPORT __attribute__((weak)) int allocinfo_tag_info(unsigned int, struct allocinfo_ptr_info *,
						    long long *, long long *)
{
	return -1;
}
}
