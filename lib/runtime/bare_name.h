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

} /* namespace allocinfo */

#endif
