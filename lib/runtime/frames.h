/* SPDX-License-Identifier: MIT */
/*
 * Walking out of wrappers: from inside the library, up the stack to the first caller
 * outside every wrapper, with the unwinder. Called the first time a path is taken;
 * the caller table (caller_tags.h) keeps what it finds, so later walks are a probe
 * per frame.
 *
 * Programs are seldom built with frame pointers, and the library's allocation path is
 * built without them, so frames are found from the unwind tables (.eh_frame, which
 * every x86-64 object has): read by cfi_unwind.h, and by libgcc_s's _Unwind_Backtrace,
 * looked up on first need, for the frames it cannot walk (frames.cpp). What is kept of a frame is the distance from the slot of its return
 * address to the next one: fixed at a given return address for code that does not
 * alloca, and checked where it can be. Walks are bounded in depth and in how far up
 * the stack they read.
 */
#ifndef ALLOCINFO_FRAMES_H
#define ALLOCINFO_FRAMES_H

#include "internal.h"

namespace allocinfo {

struct wrapped_caller {
	uintptr_t ra;		/* return address into the first caller outside */
	uint32_t via;		/* the outermost named wrapper passed through, or 0 */
};

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
	uintptr_t entry_ra;	/* known_ra, or when 0 the first outside the library */
	uint32_t entry_offset;	/* entry_ra's slot - base; 0: not found */
	int nr;
	wrapper_frame frames[PATH_MAX_FRAMES];
	wrapped_caller caller;	/* via: the outermost named wrapper, or 0 */
};
bool unwind_from(uintptr_t known_ra, uintptr_t base, unwound_path &out) HIDDEN;
/* (known_ra 0: the library's frames are skipped; false when it is linked in.) */
/* Finds the unwinder now (what the first unwind_from() does): for a thread the library
 * starts, whose first allocation, made inside a sanitizer's thread start-up, must not
 * be the one that runs this. */
void prepare_unwinder() HIDDEN;
/* The handle to look the unwinder's functions up in (dlsym), libgcc_s loaded if the
 * program has no unwinder of its own; false when there is none to be had. Not from
 * inside an allocation (it may load a library). */
bool unwinder_library(void **handle) HIDDEN;

/* Bytes of stack the unwinder reads above the walker's frame, and the largest step
 * between two frames a walk keeps (what later walks read is bounded by the thread's
 * stack: stack_last_word()). */
constexpr uintptr_t WALK_MAX_STACK = 1u << 20;

/* This thread's stack, [lo, lo + size), and the address of its last word: from
 * pthread_getattr_np() the first time a thread asks (find_this_stack()); all 0 until
 * then, and an empty range when it cannot tell. */
struct stack_range {
	uintptr_t lo, size, last_word;
};
extern __thread stack_range t_stack HIDDEN __attribute__((tls_model("initial-exec")));
stack_range find_this_stack() HIDDEN;

/*
 * The last word of this thread's stack that a walker whose frame is base may read, or
 * 0 when base is not on it (a signal's alternate stack, a coroutine's): then nothing
 * is read. A step remembered from another path through the library (its frames differ
 * in size) must not read past the stack's top, where nothing may be mapped.
 */
inline uintptr_t stack_last_word(uintptr_t base)
{
	stack_range s = t_stack;
	if (unlikely(!s.size))
		s = find_this_stack();
	return base - s.lo < s.size ? s.last_word : 0;
}

} /* namespace allocinfo */

#endif
