// SPDX-License-Identifier: MIT
/*
 * A C++ library built without the header whose global objects are made by operator
 * new and new[] while dlopen() loads it, before the library routes its calls, and
 * deleted once they are routed, when it is unloaded (underneath_report.c).
 */
#include <stddef.h>

#include <string>
#include <vector>

namespace {

struct holder {
	int *array = new int[100];
	~holder() { delete[] array; }
};

/* In this order: the first is made before any call reaches the library (which then
 * routes the object's calls), so delete[] meets a block of the allocator's new[]. */
holder held;
std::vector<int> numbers(1000);
std::string text(200, 'x');

} // namespace

extern "C" size_t cxx_globals_size()
{
	return numbers.size() + text.size() + (held.array ? 100 : 0);
}
