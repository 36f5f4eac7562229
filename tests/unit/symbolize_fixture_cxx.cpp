/* SPDX-License-Identifier: MIT */
/*
 * C++ code at known lines for test_symbolize.cpp, in libsymfixture.so, built with
 * -gdwarf-4 -fdebug-types-section, so that the class lives in a type unit
 * (.debug_types) and the unit holds a skeleton of it: an inlined constructor of a
 * class with a virtual base, named with its namespaces and class. (GCC gives its
 * declaration the C4 linkage name; a constructor named by its scopes alone is
 * report_paths.sh's.)
 */
typedef void (*symfix_cb)(void);

namespace symfix_outer_ns {
namespace inner {

struct base {
	int b = 1;
};

struct widget : virtual base {
	int n;
	__attribute__((always_inline)) widget(symfix_cb cb, int x) : n(x)
	{
		cb(); static_assert(__LINE__ == 23, "line_ctor");
		n += 2;
	}
};

} /* namespace inner */
} /* namespace symfix_outer_ns */

extern "C" __attribute__((visibility("default"), noinline, used)) int
symfix_ctor(symfix_cb cb, int x)
{
	symfix_outer_ns::inner::widget w(cb, x);
	return w.n + w.b;
}
