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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>
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

template <typename T> struct maker {
	__attribute__((noinline)) static T *make(int line_out[1])
	{
		line_out[0] = HERE_NEXT;
		return new T(1);
	}
};

/* Names from debug info are shortened as pprof shows them: no template arguments,
 * and the function holding a lambda without "()". */
void test_debug_info_names_are_short(void **)
{
	int line[1];
	long *p = maker<long>::make(line);
	escape(p);
	assert_site(__FILE__, line[0], "{anonymous}::maker::make", sizeof(long), 1);
	int lambda_line = 0;
	auto f = [&lambda_line]() __attribute__((noinline)) {
		lambda_line = HERE_NEXT;
		return new short(2);
	};
	short *q = f();
	escape(q);
	assert_site(__FILE__, lambda_line,
		    "{anonymous}::test_debug_info_names_are_short::<lambda>", sizeof(short), 1);
	delete p;
	delete q;
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

/* An address-space limit just above what the process maps makes a big new fail
 * once; the new handler lifts the limit, and the retry is charged to the line of
 * the new-expression like any other. Without a handler, bad_alloc, and nothing
 * counted. */
constexpr size_t BIG = 256u << 20;
struct rlimit saved_limit;
int handler_calls;

void lift_limit()
{
	handler_calls++;
	setrlimit(RLIMIT_AS, &saved_limit);
}

bool limit_address_space()
{
	unsigned long pages = 0;
	FILE *f = fopen("/proc/self/statm", "r");
	if (!f)
		return false;
	int ok = fscanf(f, "%lu", &pages) == 1;
	fclose(f);
	if (!ok || getrlimit(RLIMIT_AS, &saved_limit) != 0)
		return false;
	struct rlimit low = saved_limit;
	low.rlim_cur = pages * (rlim_t)sysconf(_SC_PAGESIZE) + (32u << 20);
	return setrlimit(RLIMIT_AS, &low) == 0;
}

void test_new_handler_retries(void **)
{
	const char *san = getenv("ALLOCINFO_SANITIZER");
	if (san && strcmp(san, "no") != 0)
		skip();	/* sanitizers reserve terabytes of address space */
	assert_true(limit_address_space());
	std::set_new_handler(lift_limit);
	int line = HERE_NEXT;
	char *p = new char[BIG];
	escape(p);
	std::set_new_handler(nullptr);
	assert_int_equal(handler_calls, 1);
	assert_site(__FILE__, line, "{anonymous}::test_new_handler_retries", BIG, 1);
	delete[] p;
	struct site_counts c = site_lookup(__FILE__, line, nullptr);
	assert_true(!c.found || (c.bytes == 0 && c.calls == 0));	/* caller tags at 0 go */

	assert_true(limit_address_space());
	bool thrown = false;
	int line2 = HERE_NEXT;
	try {
		escape(new char[BIG]);
	} catch (const std::bad_alloc &) {
		thrown = true;
	}
	setrlimit(RLIMIT_AS, &saved_limit);
	assert_true(thrown);
	c = site_lookup(__FILE__, line2, nullptr);
	assert_true(!c.found || (c.bytes == 0 && c.calls == 0));
}

} // namespace

int main()
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_new_forms),
		cmocka_unit_test(test_new_is_named_after_the_function),
		cmocka_unit_test(test_debug_info_names_are_short),
		cmocka_unit_test(test_containers_leave_nothing),
		cmocka_unit_test(test_tagged_calls_in_cxx),
		cmocka_unit_test(test_scope_charges_new),
		cmocka_unit_test(test_new_handler_retries),
	};
	return cmocka_run_group_tests(tests, nullptr, nullptr);
}
