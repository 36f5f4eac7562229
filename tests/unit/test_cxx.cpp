/* SPDX-License-Identifier: MIT */
/*
 * C++: every form of operator new and delete is counted, charged to the line of the
 * new-expression through its caller tag; containers leave nothing behind; tagged
 * calls keep their names when the header comes first.
 */
#include <allocinfo.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include <setjmp.h>
extern "C" {
#include <cmocka.h>
}

#include "site_report.h"

#define HERE_NEXT (__LINE__ + 1)

namespace {

struct alignas(256) wide {
	char bytes[512];
};

struct with_dtor {
	~with_dtor() { }
	int v = 1;
};

/* The optimiser may not drop a new/delete pair whose pointer escapes here. */
void escape(void *p)
{
	__asm__ volatile("" : : "r"(p) : "memory");
}

void test_new_forms(void **)
{
	int l1 = HERE_NEXT;
	int *one = new int(7);
	escape(one);
	int l2 = HERE_NEXT;
	int *arr = new int[10];
	escape(arr);
	int l3 = HERE_NEXT;
	wide *w = new wide;
	escape(w);
	int l4 = HERE_NEXT;
	char *nt = new (std::nothrow) char[33];
	escape(nt);
	int l5 = HERE_NEXT;
	wide *wa = new wide[2];
	escape(wa);
	int l6 = HERE_NEXT;
	with_dtor *d = new with_dtor[3];	/* an array cookie is part of the request */
	escape(d);

	assert_int_equal(reinterpret_cast<uintptr_t>(w) % 256, 0);
	assert_int_equal(reinterpret_cast<uintptr_t>(wa) % 256, 0);
	assert_site(__FILE__, l1, nullptr, sizeof(int), 1);
	assert_site(__FILE__, l2, nullptr, 10 * sizeof(int), 1);
	assert_site(__FILE__, l3, nullptr, sizeof(wide), 1);
	assert_site(__FILE__, l4, nullptr, 33, 1);
	assert_site(__FILE__, l5, nullptr, 2 * sizeof(wide), 1);
	assert_site(__FILE__, l6, nullptr, 3 * sizeof(with_dtor) + sizeof(size_t), 1);

	delete one;		/* sized delete */
	delete[] arr;
	delete w;		/* aligned, sized delete */
	delete[] nt;
	delete[] wa;
	delete[] d;
	struct site_counts c = site_lookup(__FILE__, l1, nullptr);
	assert_true(!c.found || (c.bytes == 0 && c.calls == 0));
	for (int l : { l2, l3, l4, l5, l6 }) {
		c = site_lookup(__FILE__, l, nullptr);
		assert_true(!c.found || (c.bytes == 0 && c.calls == 0));
	}
}

void test_new_is_named_after_the_function(void **)
{
	int line = HERE_NEXT;
	long *p = new long(1);
	escape(p);
	/* caller tags are named from debug info: file:line and the function */
	struct site_counts c = site_lookup(__FILE__, line, nullptr);
	assert_true(c.found);
	assert_int_equal(c.bytes, sizeof(long));
	const char *r = site_report_text();
	if (!strstr(r, "func:{anonymous}::test_new_is_named_after_the_function"))
		fail_msg("report:\n%s", r);
	delete p;
}

/* Live bytes over the whole report: every line, tagged or not. */
long long report_total_bytes()
{
	site_lookup("", 0, nullptr);	/* refreshes the report */
	long long total = 0;
	for (const char *l = site_report_text(); *l;) {
		long long bytes;
		unsigned long long calls;
		if (l[0] != '#' && sscanf(l, "%lld %llu", &bytes, &calls) == 2)
			total += bytes;
		const char *nl = strchr(l, '\n');
		if (!nl)
			break;
		l = nl + 1;
	}
	return total;
}

void test_containers_leave_nothing(void **)
{
	long long before = report_total_bytes();
	{
		std::vector<int> v;
		for (int i = 0; i < 10000; i++)
			v.push_back(i);	/* grows many times */
		std::map<std::string, std::shared_ptr<std::vector<int>>> m;
		for (int i = 0; i < 100; i++)
			m[std::string(40, char('a' + i % 26)) + std::to_string(i)] =
				std::make_shared<std::vector<int>>(i, i);
		assert_int_equal(m.size(), 100);
		escape(v.data());
		/* the containers are counted while they live: at least the vector's array
		 * and the 100 vectors of 0..99 ints */
		assert_true(report_total_bytes() >=
			    before + (long long)(v.capacity() * sizeof(int)) + 4950 * 4);
	}
	/* and leave exactly nothing behind */
	assert_int_equal(report_total_bytes(), before);
}

void test_tagged_calls_in_cxx(void **)
{
	int l1 = HERE_NEXT;
	void *p = malloc(48);
	int l2 = HERE_NEXT;
	char *s = strdup("abc");
	int l3 = HERE_NEXT;
	void *q = std::malloc(16);	/* std:: keeps working and is tagged too */
	assert_site(__FILE__, l1, "{anonymous}::test_tagged_calls_in_cxx", 48, 1);
	assert_site(__FILE__, l2, "{anonymous}::test_tagged_calls_in_cxx", 4, 1);
	assert_site(__FILE__, l3, "{anonymous}::test_tagged_calls_in_cxx", 16, 1);
	free(p);
	free(s);
	std::free(q);
	assert_site(__FILE__, l1, "{anonymous}::test_tagged_calls_in_cxx", 0, 0);
}

void test_scope_charges_new(void **)
{
	int line;
	std::vector<std::string> *v;
	{
		line = HERE_NEXT;
		ALLOC_TAG_SCOPE();
		v = new std::vector<std::string>(3, std::string(100, 'x'));
	}
	/* the vector object, its array and three 101-byte strings */
	assert_site(__FILE__, line, "{anonymous}::test_scope_charges_new",
		    sizeof(*v) + 3 * sizeof(std::string) + 3 * 101, 5);
	delete v;
	assert_site(__FILE__, line, "{anonymous}::test_scope_charges_new", 0, 0);
}

} // namespace

int main()
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_new_forms),
		cmocka_unit_test(test_new_is_named_after_the_function),
		cmocka_unit_test(test_containers_leave_nothing),
		cmocka_unit_test(test_tagged_calls_in_cxx),
		cmocka_unit_test(test_scope_charges_new),
	};
	return cmocka_run_group_tests(tests, nullptr, nullptr);
}
