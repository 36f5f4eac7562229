/* SPDX-License-Identifier: MIT */
/* <malloc.h> as allocinfo-cc compiles it: the next one on the include path, read
 * without allocinfo.h's call macros, which declares malloc() or its kin. */
#pragma GCC system_header
#include <allocinfo/macros-off.h>
#include_next <malloc.h>
#include <allocinfo/macros-on.h>
