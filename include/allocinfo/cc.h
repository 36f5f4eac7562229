/* SPDX-License-Identifier: MIT */
/*
 * allocinfo.h as allocinfo-cc and allocinfo-c++ include it (-include), with
 * include/allocinfo/wrap first on the include path: the C library's headers are not
 * read here but where the file includes them, after its own feature-test macros.
 */
#pragma GCC system_header
#define ALLOCINFO__WRAPPED 1
#include <allocinfo.h>
