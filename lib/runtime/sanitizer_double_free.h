/* SPDX-License-Identifier: MIT */
/*
 * A double free of a counted block, under AddressSanitizer. The first free() cleared
 * the block's record and gave the sanitizer the block's start, 16 bytes below the
 * pointer; the second finds no record and would hand the sanitizer the pointer as it
 * is, which it reports as a free of an address 16 bytes inside a block, "not
 * malloc()-ed". When the sanitizer has a freed block starting there, that start is
 * what it gets instead: its report is then the double free it is, with the stacks of
 * the block's making and first free.
 */
#ifndef ALLOCINFO_SANITIZER_DOUBLE_FREE_H
#define ALLOCINFO_SANITIZER_DOUBLE_FREE_H

#include <link.h>

#include "internal.h"

namespace allocinfo {
namespace sanitizer_double_free {

/* Finds AddressSanitizer's interface in the object that serves the blocks (from
 * start-up); nothing changes under the other sanitizers, which lack it. */
void init(struct link_map *sanitizer) HIDDEN;

/* p, a pointer without a record going to the sanitizer's free or delete: the start
 * of the freed counted block p was, else p. */
void *block_for(void *p) noexcept HIDDEN;

} /* namespace sanitizer_double_free */
} /* namespace allocinfo */

#endif
