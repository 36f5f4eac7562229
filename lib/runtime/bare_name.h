/* SPDX-License-Identifier: MIT */
/*
 * A C++ function's bare qualified name from its __PRETTY_FUNCTION__, for matching
 * declared wrappers (wrappers.h) inside the library, which has no C++ runtime to run
 * the readers' full tidier (lib/reader/cxxname.h) with. Return type, parameters,
 * qualifiers and template arguments go:
 *
 *   void* ns::Pool<T>::grab(size_t) [with T = int]  -> ns::Pool::grab
 *   std::vector<_Tp, _Alloc>::reference std::vector<_Tp, _Alloc>::emplace_back(...)
 *                                                    -> std::vector::emplace_back
 *
 * Names it cannot take apart (operators, functions returning function pointers) come
 * out as best it can; they are only compared with patterns.
 */
#ifndef ALLOCINFO_BARE_NAME_H
#define ALLOCINFO_BARE_NAME_H

#include <stddef.h>

#include "internal.h"

namespace allocinfo {

/* Writes the bare name of pretty into out (len bytes, cut to fit, NUL-terminated). */
void cxx_bare_name(const char *pretty, char *out, size_t len) HIDDEN;

/*
 * The same bare name from a function's mangled symbol, for the frames a walk meets:
 * _Z7xmallocm -> xmalloc, _ZN2ns4Pool4grabEm -> ns::Pool::grab, and static ones
 * (_ZL...). Only plain names and nested ones of plain names (and the anonymous
 * namespace) are read: for anything else (templates, substitutions, constructors,
 * operators) it returns null. Else the parameters' mangling, after the name.
 */
const char *mangled_bare_name(const char *symbol, char *out, size_t len) HIDDEN;

} /* namespace allocinfo */

#endif
