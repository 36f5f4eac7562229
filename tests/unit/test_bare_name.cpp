// SPDX-License-Identifier: MIT
// The runtime's own small tools, outside the library: bare C++ names, from
// __PRETTY_FUNCTION__ and from mangled symbols, for matching declared wrappers
// (bare_name.h), and the hash map of its tables (plain_map.h).
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
using allocinfo::mangled_bare_name;
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

/* A symbol's bare name and what follows it, or that it is not read (want null). */
static void expect_mangled(const char *symbol, const char *want, const char *rest)
{
	char out[256];
	const char *got = mangled_bare_name(symbol, out, sizeof(out));
	if (!want) {
		if (got)
			print_error("%s -> '%s', expected nothing\n", symbol, out);
		assert_null(got);
		return;
	}
	if (!got)
		print_error("%s -> nothing, not '%s'\n", symbol, want);
	assert_non_null(got);
	assert_string_equal(out, want);
	assert_string_equal(got, rest);
}

static void t_mangled_bare_names(void **)
{
	expect_mangled("_Z7xmallocm", "xmalloc", "m");
	expect_mangled("_ZL19allocinfo__malloc_nPK9alloc_tagm.constprop.0",
		       "allocinfo__malloc_n", "PK9alloc_tagm.constprop.0");
	expect_mangled("_Z6mallocPK9alloc_tagm", "malloc", "PK9alloc_tagm");
	expect_mangled("_ZN2ns4Pool4grabEm", "ns::Pool::grab", "m");
	expect_mangled("_ZNK2ns4Pool4sizeEv", "ns::Pool::size", "v");
	expect_mangled("_ZN12_GLOBAL__N_14growEm", "(anonymous namespace)::grow", "m");
	/* Not read: C names, templates, substitutions, constructors, operators. */
	expect_mangled("xmalloc", nullptr, nullptr);
	expect_mangled("_ZN2ns4PoolIiE4grabEm", nullptr, nullptr);
	expect_mangled("_ZNSt6vectorIiSaIiEE9push_backERKi", nullptr, nullptr);
	expect_mangled("_ZN4PoolC2Ev", nullptr, nullptr);
	expect_mangled("_Znwm", nullptr, nullptr);
	/* Malformed: a length past the end, or too long to keep. */
	expect_mangled("_Z9xmal", nullptr, nullptr);
	expect_mangled("_ZN2ns", nullptr, nullptr);
	char big[300] = "_Z280";
	memset(big + 5, 'a', 280);
	big[285] = '\0';
	expect_mangled(big, nullptr, nullptr);
	char out[8];
	assert_null(mangled_bare_name("_ZN2ns9grab_moreEi", out, sizeof(out)));
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
		cmocka_unit_test(t_mangled_bare_names),
		cmocka_unit_test(t_plain_map),
	};
	return cmocka_run_group_tests(tests, nullptr, nullptr);
}
