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

/* Points the object's own dynamic symbol `name` at fn, so that every later lookup of
 * the name finds fn: the references of objects loaded later, calls bound lazily,
 * dlsym(). Not done (false) where the symbol table shares a page with code. */
bool redirect_symbol(const struct link_map *map, const char *name, void *fn) HIDDEN;

/* Points the entries of the object's C++ vtable `vtable` (its symbol, mangled) that
 * lead to its function `method` at fn, so that a virtual call reaches fn. Returns how
 * many entries now do. */
unsigned redirect_virtual(const struct link_map *map, const char *vtable, const char *method,
			  void *fn) HIDDEN;

/* The addresses of the code of the shared object loaded at base (its load bias, a
 * link map's l_addr), [lo, hi): false (and nothing written) when no object but the
 * program itself is there, or it has no code. */
bool code_range(uintptr_t base, uintptr_t *lo, uintptr_t *hi) HIDDEN;

/* Rewrites the entries of every loaded object but the allocator's own (whose calls to
 * itself stay its own) and the dynamic loader's, for the malloc family when
 * malloc_family (the allocator comes first; `self` is liballocinfo) and for the
 * allocator's own functions that take a block (allocator_api.h) always. Objects
 * loaded later get the same. Returns how many entries now lead to us. */
unsigned route_calls(struct link_map *allocator, struct link_map *self, bool malloc_family) HIDDEN;

/* Over an allocator that comes after the library: its own calls of the functions
 * that make or resize a block (malloc, realloc, memalign, operator new, ...) are
 * pointed at what the loader would have bound them to without the library, its own
 * definitions mostly, so that they never come back through the library to the
 * allocator. Returns how many entries were rewritten. */
unsigned route_allocator_makes(struct link_map *allocator, struct link_map *self) HIDDEN;

/* The entry point that a routed call of `name` reaches instead of the exported one
 * (override.cpp: the lean path first), or null where the exported one serves. */
void *routed_entry(const char *name) HIDDEN;

/* Points every loaded object's GOT entries for names[i] (nr of them, at most as many
 * as route_calls() may route) at fns[i] (null: left alone), the defining object's own
 * included. Returns how many entries were rewritten. */
unsigned route_symbols(const char *const *names, void *const *fns, unsigned nr) HIDDEN;

/*
 * Over another allocator, the library's own calls to glibc's __libc_malloc,
 * __libc_calloc, __libc_realloc, __libc_free and __libc_memalign (in that order in
 * fns) are pointed at that allocator's functions, so that its fast path, which calls
 * them through the GOT, allocates from it at no cost. True when every entry leads
 * there; it is the caller's to undo a partial rewrite (or never use the fast path).
 */
constexpr unsigned NR_BACKEND = 5;
bool redirect_backend(struct link_map *self, void *const fns[NR_BACKEND]) HIDDEN;

/*
 * Objects loaded after routing (dlopen, and glibc's own: NSS modules, iconv) are
 * appended to the loader's list after the last object routed: the allocation path
 * over an allocator that came first checks route_pending() (two loads) and routes
 * them with route_new_objects(). An object is routed only once the loader has
 * finished relocating it (its RELRO segment is read-only again), never halfway.
 */
extern struct link_map *g_route_tail HIDDEN;
/* The tail while nothing is routed (or dlclose runs): an entry followed by nothing,
 * so that the check needs no test of its own for that case. */
extern struct link_map g_no_route_tail HIDDEN;

static inline bool route_pending()
{
	struct link_map *tail = __atomic_load_n(&g_route_tail, __ATOMIC_ACQUIRE);
	return unlikely(__atomic_load_n(&tail->l_next, __ATOMIC_RELAXED) != nullptr);
}

void route_new_objects() HIDDEN;

/* Around dlclose, which may unload the last object routed: stops the checks, then
 * looks at every object again. */
void route_before_dlclose() HIDDEN;
/* In a forked child: no routing is under way. */
void route_fork_child() HIDDEN;
void route_after_dlclose() HIDDEN;

} /* namespace allocinfo */

#endif
