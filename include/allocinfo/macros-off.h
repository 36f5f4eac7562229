/* SPDX-License-Identifier: MIT */
/*
 * Sets allocinfo.h's call macros aside (in each header of allocinfo/wrap, around the system one):
 * the header's declarations of malloc() and friends stay declarations. No include
 * guard: read once before each wrapped header; macros-on.h puts them back.
 */
#pragma GCC system_header
#pragma push_macro("malloc")
#pragma push_macro("calloc")
#pragma push_macro("realloc")
#pragma push_macro("reallocarray")
#pragma push_macro("aligned_alloc")
#pragma push_macro("posix_memalign")
#pragma push_macro("memalign")
#pragma push_macro("valloc")
#pragma push_macro("pvalloc")
#pragma push_macro("strdup")
#pragma push_macro("strndup")
#pragma push_macro("asprintf")
#pragma push_macro("vasprintf")
#undef malloc
#undef calloc
#undef realloc
#undef reallocarray
#undef aligned_alloc
#undef posix_memalign
#undef memalign
#undef valloc
#undef pvalloc
#undef strdup
#undef strndup
#undef asprintf
#undef vasprintf
