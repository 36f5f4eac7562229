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

/* The frames from an entry point's return address known_ra up to the first caller
 * outside every wrapper, as the unwinder finds them, for the caller table to keep
 * (caller_tags.h): each wrapper frame's return address, the distance from the slot
 * holding it to the next one, and its wrapper; and where known_ra's slot lies above
 * base, the frame address of the function whose walks will use them. */
struct wrapper_frame {
	uintptr_t ra;
	uint32_t step;		/* 0: not fixed */
	uint32_t via;
};
constexpr int PATH_MAX_FRAMES = 16;
struct unwound_path {
	uint32_t entry_offset;	/* known_ra's slot - base; 0: not found */
	int nr;
	wrapper_frame frames[PATH_MAX_FRAMES];
	wrapped_caller caller;	/* via: the outermost named wrapper, or 0 */
};
bool unwind_from(uintptr_t known_ra, uintptr_t base, unwound_path &out) HIDDEN;

/* Bytes of stack a walk may read above the walker's frame. */
constexpr uintptr_t WALK_MAX_STACK = 1u << 20;

/* An object in [lo, hi) was unloaded: forget what was learnt about its code. */
void frames_forget(uintptr_t lo, uintptr_t hi) HIDDEN;

} /* namespace allocinfo */

#endif
