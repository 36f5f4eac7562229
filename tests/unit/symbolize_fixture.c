/* SPDX-License-Identifier: MIT */
/*
 * Code at known lines for test_symbolize.cpp, built as libsymfixture.so with
 * -g -O1 -fPIC -shared. Each line the test expects is pinned by a _Static_assert on
 * that line: moving code breaks the build here, not the test in a puzzling way.
 */
#include <stddef.h>

typedef void (*symfix_cb)(void);

#define SYMFIX_API __attribute__((visibility("default"), noinline, used))
#define SYMFIX_INLINE static inline __attribute__((always_inline))

/* On one line: the first instruction may belong to the body's first statement. */
SYMFIX_API int symfix_add(int a, int b) { return a + b; } _Static_assert(__LINE__ == 15, "add");

/* The callback's return address is just after the call: a line inside this body. */
SYMFIX_API int symfix_call(symfix_cb cb, int x)
{
	cb(); _Static_assert(__LINE__ == 20, "line_call");
	return x + 1;
}

/* Inlined: the callback returns into symfix_outer's code, at symfix_inner's line. */
SYMFIX_INLINE int symfix_inner(symfix_cb cb, int x)
{
	cb(); _Static_assert(__LINE__ == 27, "line_inner");
	return x * 3;
}

SYMFIX_API int symfix_outer(symfix_cb cb, int x)
{
	int r = symfix_inner(cb, x);
	return r + 7;
}

/* Inlined from a "system header" (see the #line below): reported at this call. */
SYMFIX_INLINE int symfix_sys_outer(symfix_cb cb, int x);

SYMFIX_API int symfix_sys(symfix_cb cb, int x)
{
	int r = symfix_sys_outer(cb, x); _Static_assert(__LINE__ == 42, "line_sys");
	return r + 5;
}

/* Last in the file: everything below is recorded as coming from /usr/include. */
#line 1 "/usr/include/allocinfo-symfixture.h"
SYMFIX_INLINE int symfix_sys_inner(symfix_cb cb, int x)
{
	cb();
	return x * 2;
}

SYMFIX_INLINE int symfix_sys_outer(symfix_cb cb, int x)
{
	return symfix_sys_inner(cb, x) + 1;
}
