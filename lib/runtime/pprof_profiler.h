/* SPDX-License-Identifier: MIT */
/*
 * The built-in pprof heap profiler (allocinfo_pprof_profiler_start(),
 * ALLOCINFO_PROFILE=BASE): a client of the public profiler API (allocinfo.h) and
 * nothing else. It keeps a table of the distinct sampled stacks with their
 * estimated allocated and in-use objects and bytes (pprof's unsampling: a sample of
 * s bytes at rate R stands for 1 / (1 - exp(-s/R)) objects of s bytes), and writes
 * snapshots through liballocinfo-reader.so (write_heap_profile), which adds the
 * exact live totals of every call site (allocinfo_tag_info()).
 *
 * Nothing in the callbacks allocates: the tables live in address space reserved
 * with mmap when the profiler starts, so on_alloc and on_free take one short lock
 * and never recurse into malloc. A trigger met inside an allocation (alloc or in-use
 * interval) only wakes the profiler's thread, which writes; the time interval is
 * that thread's too. allocinfo_profiler_snapshot() and the final snapshot at exit
 * write in the calling thread.
 */
#ifndef ALLOCINFO_PPROF_PROFILER_H
#define ALLOCINFO_PPROF_PROFILER_H

#include "internal.h"

namespace allocinfo {
namespace pprof_profiler {

/* From the library's constructor: ALLOCINFO_PROFILE and its companions. */
void start_from_environment() HIDDEN;

/* fork() handlers, called by init.cpp's in its order. */
void fork_prepare() HIDDEN;
void fork_parent() HIDDEN;
void fork_child() HIDDEN;

/* Parses a size: plain bytes, or a number with KiB, MiB or GiB. False when
 * malformed. (For the tests too.) */
bool parse_size(const char *s, size_t *out) HIDDEN;
/* Parses seconds, decimals allowed, at least 0. */
bool parse_seconds(const char *s, double *out) HIDDEN;

/* 1 / (1 - exp(-size/rate)): the objects one sample of size bytes stands for
 * (exactly 1 at rate 1). Without libm. */
double sample_weight(size_t size, size_t rate) HIDDEN;

} /* namespace pprof_profiler */
} /* namespace allocinfo */

#endif
