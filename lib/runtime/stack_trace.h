/* SPDX-License-Identifier: MIT */
/*
 * Stacks of sampled allocations: return addresses, the program's allocation call
 * first, the library's own frames left out.
 *
 * Two walkers. The default is libgcc's DWARF unwinder (_Unwind_Backtrace), which
 * reads the .eh_frame every object on a Debian system carries even when it is built
 * without frame pointers. It is the process's own when it has one, else libgcc_s.so.1
 * opened with dlopen when a profiler is attached; never linked: liballocinfo's NEEDED
 * list stays libc alone, and no static copy of the unwinder binds the
 * _Unwind_Resume that operator new's exception paths use. ALLOCINFO_PROFILE_UNWIND=fp selects a walk of the frame-pointer chain,
 * bounded by the thread's stack, for programs built with -fno-omit-frame-pointer:
 * the unwinder only takes it through the library's own frames (built without frame
 * pointers, they use rbp for other values) to the program's frame and its rbp; from
 * there each frame costs two loads, and the walk stops at the first frame without a
 * frame pointer.
 */
#ifndef ALLOCINFO_STACK_TRACE_H
#define ALLOCINFO_STACK_TRACE_H

#include "internal.h"

namespace allocinfo {
namespace stack_trace {

enum class walker { unwind, fp };

/* Reads ALLOCINFO_PROFILE_UNWIND (once; a malformed value gets one "allocinfo:" line
 * and the default) and loads the unwinder it needs. Not from inside malloc. */
void prepare() HIDDEN;

/*
 * Up to max return addresses into frames[]; returns how many. ra: the return address
 * of the program's allocation call when known (0 otherwise): frames before it are the
 * library's and are skipped. Takes no lock of the library's; what the walk may
 * allocate is the library's own (busy_guard), never sampled.
 */
int capture(void **frames, int max, uintptr_t ra) HIDDEN;

} /* namespace stack_trace */
} /* namespace allocinfo */

#endif
