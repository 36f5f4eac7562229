/* SPDX-License-Identifier: MIT */
/*
 * Walking out of declared wrappers: from inside the library, up the stack to the
 * first caller outside every wrapper. Called only for allocations made inside one.
 *
 * Programs are seldom built with frame pointers, and the library's allocation path is
 * built without them, so frames are found from the unwind tables (.eh_frame, which
 * every x86-64 object has): the first walk through a return address uses the C++
 * runtime's unwinder (_Unwind_Backtrace) and remembers, for that address, the
 * distance from its return-address slot to the next one (its frame's size at that
 * call, fixed for code that does not alloca); later walks through known addresses
 * are a few loads, a hash probe per frame. Walks are bounded in depth and in how far
 * up the stack they read.
 */
#ifndef ALLOCINFO_FRAMES_H
#define ALLOCINFO_FRAMES_H

#include "internal.h"

namespace allocinfo {

struct wrapped_caller {
	uintptr_t ra;		/* return address into the first caller outside */
	uint32_t via;		/* the outermost wrapper passed through (wrappers.h), or 0 */
};

/*
 * From the current allocation, finds its first caller outside every wrapper.
 * known_ra is the return address of the library's entry point into the program when
 * the caller has it, else 0: the frames of the library are skipped. False when the
 * stack cannot be walked.
 */
bool find_wrapped_caller(uintptr_t known_ra, wrapped_caller &out) HIDDEN;

/* An object in [lo, hi) was unloaded: forget what was learnt about its code. */
void frames_forget(uintptr_t lo, uintptr_t hi) HIDDEN;

} /* namespace allocinfo */

#endif
