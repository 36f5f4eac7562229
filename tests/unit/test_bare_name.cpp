// SPDX-License-Identifier: MIT
// The runtime's own small tools, outside the library: bare C++ names for matching
// declared wrappers (bare_name.h), and the hash map of its tables (plain_map.h).
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>

extern "C" {
#include <cmocka.h>
}

#include "bare_name.h"
#include "plain_map.h"

using allocinfo::cxx_bare_name;
using allocinfo::plain_map;

static void expect_bare(const char *pretty, const char *want)
{
	char out[256];
	cxx_bare_name(pretty, out, sizeof(out));
	if (strcmp(out, want) != 0)
		print_error("%s -> '%s', not '%s'\n", pretty, out, want);
	assert_string_equal(out, want);
}

static void t_bare_names(void **)
{
	expect_bare("xmalloc", "xmalloc");
	expect_bare("void* xmalloc(size_t)", "xmalloc");
	expect_bare("void* ns::Pool<T>::grab(size_t) [with T = int]", "ns::Pool::grab");
	expect_bare("std::vector<_Tp, _Alloc>::reference std::vector<_Tp, _Alloc>::emplace_back("
		    "_Args&& ...) [with _Args = {int}; _Tp = int]",
		    "std::vector::emplace_back");
	expect_bare("constexpr _Tp* std::__new_allocator<_Tp>::allocate(size_type, const void*) "
		    "[with _Tp = int; size_type = long unsigned int]",
		    "std::__new_allocator::allocate");
	expect_bare("int (anonymous namespace)::f(int)", "(anonymous namespace)::f");
	expect_bare("void* Foo::operator new(std::size_t)", "Foo::operator new");
	expect_bare("bool operator<(const A&, const A&)", "operator<");
	expect_bare("void Foo::operator()(int)", "Foo::operator()");
}

static void t_bare_name_cut_to_fit(void **)
{
	char out[8];
	cxx_bare_name("void* ns::grab_more(int)", out, sizeof(out));
	assert_string_equal(out, "ns::gra");
}

struct value {
	uint64_t a;
	uint32_t b;
};

static void t_plain_map(void **)
{
	plain_map<value> m;
	assert_null(m.find(7));
	for (uint64_t k = 1; k <= 1000; k++)
		assert_int_equal(m.insert(k * 4096, value{ k, (uint32_t)k * 3 }), 1);
	assert_int_equal(m.insert(4096, value{ 0, 0 }), 0);	/* there already: kept */
	assert_int_equal(m.size(), 1000);
	assert_int_equal(m.find(4096)->a, 1);
	assert_int_equal(m.find(500 * 4096)->b, 1500);
	for (uint64_t k = 1; k <= 1000; k += 2)
		assert_true(m.erase(k * 4096));
	assert_false(m.erase(4096));
	assert_int_equal(m.size(), 500);
	assert_null(m.find(999 * 4096));
	assert_int_equal(m.find(998 * 4096)->a, 998);
	uint64_t sum = 0;
	m.for_each([&](uint64_t key, const value &v) { sum += key / 4096 - v.a; });
	assert_int_equal(sum, 0);
	/* Deleted entries are reused: inserting and erasing forever stays bounded. */
	for (uint64_t k = 0; k < 100000; k++) {
		assert_int_equal(m.insert(1u << 30 | k, value{ k, 0 }), 1);
		assert_true(m.erase(1u << 30 | k));
	}
	assert_int_equal(m.size(), 500);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_bare_names),
		cmocka_unit_test(t_bare_name_cut_to_fit),
		cmocka_unit_test(t_plain_map),
	};
	return cmocka_run_group_tests(tests, nullptr, nullptr);
}
