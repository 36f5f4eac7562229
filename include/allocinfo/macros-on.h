/* SPDX-License-Identifier: MIT */
/* Puts back what allocinfo/macros-off.h set aside. No include guard. */
#pragma GCC system_header
#pragma pop_macro("malloc")
#pragma pop_macro("calloc")
#pragma pop_macro("realloc")
#pragma pop_macro("reallocarray")
#pragma pop_macro("aligned_alloc")
#pragma pop_macro("posix_memalign")
#pragma pop_macro("memalign")
#pragma pop_macro("valloc")
#pragma pop_macro("pvalloc")
#pragma pop_macro("strdup")
#pragma pop_macro("strndup")
#pragma pop_macro("asprintf")
#pragma pop_macro("vasprintf")
