/* SPDX-License-Identifier: MIT */
/*
 * User callbacks around C++ operator new and delete, every form: the op, size,
 * alignment, pointer and call site (a caller tag) each pre and post callback sees.
 */
#include <allocinfo.h>

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <new>

#include <setjmp.h>
#include <stdarg.h>
#include <string.h>
#include <unistd.h>
extern "C" {
#include <cmocka.h>
}

namespace {

struct alignas(64) wide {
	char bytes[128];
};

constexpr int MAX_EVENTS = 32;

struct recorder {
	allocinfo_event pre[MAX_EVENTS], post[MAX_EVENTS];
	int npre, npost;
};

void record_pre(void *u, allocinfo_event *e)
{
	auto *r = static_cast<recorder *>(u);
	if (r->npre < MAX_EVENTS)
		r->pre[r->npre++] = *e;
}

void record_post(void *u, allocinfo_event *e)
{
	auto *r = static_cast<recorder *>(u);
	if (r->npost < MAX_EVENTS)
		r->post[r->npost++] = *e;
}

const char *exe_name()
{
	static char buf[4096];
	ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
	buf[n > 0 ? n : 0] = '\0';
	const char *s = strrchr(buf, '/');
	return s ? s + 1 : buf;
}

/* A caller tag in this program, for a call from the function at fn (the caller is a
 * return address inside it). */
void check_site(const allocinfo_event &e, const void *fn)
{
	assert_null(e.file);
	assert_null(e.func);
	assert_int_equal(e.line, 0);
	assert_non_null(e.module);
	assert_string_equal(e.module, exe_name());
	uintptr_t ra = reinterpret_cast<uintptr_t>(e.caller), f = reinterpret_cast<uintptr_t>(fn);
	assert_true(ra > f && ra < f + 4096);
}

__attribute__((noinline)) void test_new_and_delete(void **)
{
	/* A tagged call links the library's entry points, new and delete among them,
	 * into a sanitizer build's static link ahead of the sanitizer's own. */
	free(malloc(1));
	static recorder r;
	memset(&r, 0, sizeof(r));
	allocinfo_callbacks cb = { sizeof(cb), 1u << ALLOCINFO_OP_NEW | 1u << ALLOCINFO_OP_DELETE,
				   record_pre, record_post, &r };
	int h = allocinfo_callbacks_add(&cb);
	assert_true(h >= 0);
	int *one = new int(5);
	int *arr = new int[10];
	wide *w = new wide;
	int *nt = new (std::nothrow) int(6);
	delete one;
	delete[] arr;
	delete w;
	delete nt;
	assert_int_equal(allocinfo_callbacks_remove(h), 0);

	assert_int_equal(r.npre, 8);
	assert_int_equal(r.npost, 8);
	struct {
		int op;
		size_t size, align;
		void *ptr;
	} want[] = {
		{ ALLOCINFO_OP_NEW, sizeof(int), 0, one },
		{ ALLOCINFO_OP_NEW, 10 * sizeof(int), 0, arr },
		{ ALLOCINFO_OP_NEW, sizeof(wide), alignof(wide), w },
		{ ALLOCINFO_OP_NEW, sizeof(int), 0, nt },
		{ ALLOCINFO_OP_DELETE, sizeof(int), 0, one },
		{ ALLOCINFO_OP_DELETE, 10 * sizeof(int), 0, arr },
		{ ALLOCINFO_OP_DELETE, sizeof(wide), 0, w },
		{ ALLOCINFO_OP_DELETE, sizeof(int), 0, nt },
	};
	for (int i = 0; i < 8; i++) {
		for (const allocinfo_event *e : { &r.pre[i], &r.post[i] }) {
			assert_int_equal(e->op, want[i].op);
			assert_int_equal(e->size, want[i].size);
			assert_int_equal(e->alignment, want[i].align);
			const void *fn = reinterpret_cast<const void *>(&test_new_and_delete);
			if (want[i].op == ALLOCINFO_OP_NEW)
				check_site(*e, fn);
			else	/* the block's site: the caller tag, by module */
				assert_string_equal(e->module, exe_name());
		}
		assert_ptr_equal(r.post[i].ptr, want[i].ptr);
		if (want[i].op == ALLOCINFO_OP_DELETE)
			assert_ptr_equal(r.pre[i].ptr, want[i].ptr);
		else
			assert_null(r.pre[i].ptr);
	}
	assert_int_equal((uintptr_t)w % alignof(wide), 0);
}

} /* namespace */

int main()
{
	const CMUnitTest tests[] = {
		cmocka_unit_test(test_new_and_delete),
	};
	return cmocka_run_group_tests(tests, nullptr, nullptr);
}
