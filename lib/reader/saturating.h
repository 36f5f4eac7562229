/* SPDX-License-Identifier: MIT */
/*
 * Sums and differences of counters that clamp instead of overflowing: readers add up
 * values from stores that may be hostile, where a signed overflow would be undefined
 * behaviour.
 */
#ifndef ALLOCINFO_SATURATING_H
#define ALLOCINFO_SATURATING_H

#include <stdint.h>

namespace allocinfo {

inline int64_t saturating_add(int64_t a, int64_t b)
{
	int64_t r;
	if (__builtin_add_overflow(a, b, &r))
		return b > 0 ? INT64_MAX : INT64_MIN;
	return r;
}

inline int64_t saturating_sub(int64_t a, int64_t b)
{
	int64_t r;
	if (__builtin_sub_overflow(a, b, &r))
		return b < 0 ? INT64_MAX : INT64_MIN;
	return r;
}

} /* namespace allocinfo */

#endif
