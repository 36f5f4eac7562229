/* SPDX-License-Identifier: MIT */
/*
 * Declared wrappers: functions named in ALLOCINFO_WRAPPERS (names and shell patterns)
 * whose allocations are charged to the first caller outside every wrapper, with a
 * " via:NAME" token naming the outermost one.
 *
 * Names become address ranges once per loaded object, read from its ELF symbol
 * tables (.symtab from the file when it has one, else .dynsym) the first time an
 * address in the object is asked about; an object loaded later by dlopen is read
 * when its first allocation arrives, and forgotten when it is unloaded. A wrapper is
 * known by an id (1 and up) that names it; 0 means "not a wrapper".
 *
 * Built in, unless ALLOCINFO_WRAPPERS leaves them out with "-std", "-libc" or
 * "-known": the standard libraries (transparent: skipped, no token) and common
 * wrappers with unambiguous names (GLib's g_malloc family, the xmalloc family).
 */
#ifndef ALLOCINFO_WRAPPERS_H
#define ALLOCINFO_WRAPPERS_H

#include "internal.h"

namespace allocinfo {

constexpr uint32_t WRAPPER_MAX_IDS = 0x7fff;	/* ids fit 15 bits of a caller key */
/* The id of built-in wrappers that are skipped without a token: the C++ standard
 * library (its headers' code, by mangled name, and all of libstdc++.so) and the C
 * library (all of libc.so: strdup, getline, open_memstream, fopen, qsort, ...). */
constexpr uint32_t WRAPPER_TRANSPARENT = WRAPPER_MAX_IDS;

/* Start-up: reads ALLOCINFO_WRAPPERS, and the functions liballocs' language describes
 * in ALLOCINFO_ALLOC_FNS and ALLOCINFO_FREE_FNS (facades over malloc: wrappers too);
 * ALLOCINFO_SUBALLOC_FNS and _SUBFREE_FNS declare allocators of the program's own,
 * whose calls are then routed to be counted (suballoc.h). One "allocinfo:"
 * line for each malformed entry. */
void wrappers_init() HIDDEN;

/* Whether any wrapper, declared or built in, is looked for. */
bool wrappers_declared() HIDDEN;

/* The wrapper whose code holds pc (an address inside a function, not a return
 * address: pass ra - 1), or 0. May read the object's symbol tables: never call it
 * with the registry lock held. */
uint32_t wrapper_at(uintptr_t pc) HIDDEN;

/* The wrapper a function name (a static tag's __func__, or a C++ tag's name as the
 * reports print it) declares, or 0. */
uint32_t wrapper_named(const char *func) HIDDEN;

/* The name of wrapper id, as the " via:" token shows it; "" for 0. Valid for the
 * life of the process. */
const char *wrapper_name(uint32_t id) HIDDEN;

/* An object in [lo, hi) was unloaded: its ranges go. */
void wrappers_forget(uintptr_t lo, uintptr_t hi) HIDDEN;

} /* namespace allocinfo */

#endif
