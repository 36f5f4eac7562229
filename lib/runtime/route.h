/* SPDX-License-Identifier: MIT */
/*
 * Routing the process's malloc calls to liballocinfo when another allocator comes
 * before it in symbol lookup order (preloaded into a program linked with the library,
 * or linked ahead of it): every loaded object's GOT entries for the malloc family and
 * C++ operator new and delete, which the dynamic loader bound to that allocator, are
 * pointed at our own definitions, so that every block is freed by the code that
 * made it.
 */
#ifndef ALLOCINFO_ROUTE_H
#define ALLOCINFO_ROUTE_H

#include <link.h>

#include "internal.h"

namespace allocinfo {

/* The address of `name` as the object `map` itself defines it (a function or data,
 * not an undefined reference), found in its own dynamic symbol table; null if it has
 * none. Unlike dlsym on a link map, this needs no search list (which objects loaded
 * at start-up do not have) and never allocates. */
void *defined_symbol(const struct link_map *map, const char *name) HIDDEN;

/* Rewrites the entries of every loaded object but the allocator's own (whose calls to
 * itself stay its own) and the dynamic loader's; `self` is liballocinfo. Returns how
 * many entries now lead to us. */
unsigned route_calls(struct link_map *allocator, struct link_map *self) HIDDEN;

} /* namespace allocinfo */

#endif
