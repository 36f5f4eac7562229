/* SPDX-License-Identifier: MIT */
/*
 * Allocators of the program's own (allocinfo_allocator_create(), allocinfo_charge(),
 * allocinfo_uncharge() in allocinfo.h): the side index of the blocks they charged.
 */
#ifndef ALLOCINFO_ALLOCATORS_H
#define ALLOCINFO_ALLOCATORS_H

#include "internal.h"

struct allocinfo_allocator;

namespace allocinfo {

struct allocator_block {
	uintptr_t start;
	uint64_t size;
	uint32_t slot;		/* its tag slot, which carries the allocator's token */
};

/* allocinfo_charge() for a call made from return address ra (the caller's line,
 * unless a scope or alloc_hooks() is current). */
int charge_from(struct allocinfo_allocator *a, const void *p, size_t size, uintptr_t ra) HIDDEN;

/* The charged block holding p, if any. */
bool allocators_find(uintptr_t p, allocator_block &out) HIDDEN;

} /* namespace allocinfo */

#endif
