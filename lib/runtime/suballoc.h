/* SPDX-License-Identifier: MIT */
/*
 * Allocators of the program's own described in liballocs' language
 * (ALLOCINFO_SUBALLOC_FNS="pool_alloc(pZ)p", ALLOCINFO_SUBFREE_FNS=
 * "pool_free(pP)->pool_alloc"), counted in unchanged code: every GOT entry that
 * leads to such a function is pointed at a trampoline of ours that calls it and
 * charges (or uncharges) the block against its caller, with " allocator:NAME".
 * Calls that go through no GOT entry (inside the object that defines the function,
 * without a PLT) are not seen; allocinfo-cc's link-time wrappers see those.
 */
#ifndef ALLOCINFO_SUBALLOC_H
#define ALLOCINFO_SUBALLOC_H

#include "internal.h"

namespace allocinfo {

/* The most functions declared, and the most arguments one may have (those passed in
 * registers: the trampolines forward six). */
constexpr unsigned SUBALLOC_MAX_FNS = 16;
constexpr unsigned SUBALLOC_MAX_ARGS = 6;

/* One checked description: the function [name, name + name_len) whose argument
 * number sig (from 0) is the size (an allocating one) or the pointer freed (a free,
 * with alloc_name the allocator it frees to). False, after one "allocinfo:" line
 * naming var, when the table is full. */
bool suballoc_declare(const char *var, const char *name, size_t name_len, unsigned sig,
		      bool frees, const char *alloc_name, size_t alloc_len) HIDDEN;

/* Start-up, after the descriptions: routes the loaded objects' calls to them. */
void suballoc_route() HIDDEN;

} /* namespace allocinfo */

#endif
