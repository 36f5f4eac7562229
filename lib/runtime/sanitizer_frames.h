/* SPDX-License-Identifier: MIT */
/*
 * The library's calls into a sanitizer's allocator (AddressSanitizer, LeakSanitizer),
 * whose fast unwinder records where each block was made and freed by following frame
 * pointers: through the library's frames to the program's return address, then on
 * through whatever the program's rbp holds. A program built without frame pointers
 * keeps anything there, often the address of one of its own variables; the walk then
 * reads the program's data as frames, and nearly every block gets a stack of its own,
 * which the sanitizer keeps for good (its stack depot): time and memory grow with
 * every allocation.
 *
 * Through these wrappers, the library's outermost frame record ends the chain for
 * the length of the call when what it leads to is not a frame: the stack a report
 * shows then ends at the program's line, and identical stacks are kept once.
 */
#ifndef ALLOCINFO_SANITIZER_FRAMES_H
#define ALLOCINFO_SANITIZER_FRAMES_H

#include "backend.h"

namespace allocinfo {
namespace sanitizer_frames {

/* Puts the wrappers in front of t's functions that allocate or free, and of the
 * allocator's operator new and delete (backend.h), from start-up, before anything is
 * allocated. Nothing is wrapped when the library is linked into the executable, where
 * its frames cannot be told from the program's. */
void wrap(backend::table &t) HIDDEN;

} /* namespace sanitizer_frames */
} /* namespace allocinfo */

#endif
