// SPDX-License-Identifier: MIT
// The sampling profiler with C++ operator new and delete in their forms: every one
// sampled at rate 1 with its size and stack, and each delete (plain, sized, aligned)
// reaching on_free with the sample data written in on_alloc.
#include <allocinfo.h>

#include <dlfcn.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <new>

extern "C" {
#include <cmocka.h>
}

namespace {

struct seen {
	void *block;
	size_t size;
	char first[128];	// the function of frames[0]
};

seen allocs[16], frees[16];
int nallocs, nfrees;
volatile int recording;	// the compiler knows new and delete read no variable

size_t on_alloc(void *, const allocinfo_sample *s)
{
	memcpy(s->sample_data, "cxx-data", 8);
	if (!recording || nallocs >= 16)
		return 0;
	seen &w = allocs[nallocs++];
	w.block = s->block;
	w.size = s->size;
	Dl_info di;
	const char *name = s->nframes > 0 && dladdr(static_cast<char *>(s->frames[0]) - 1, &di) &&
			   di.dli_sname ? di.dli_sname : "?";
	strncpy(w.first, name, sizeof(w.first) - 1);
	return 0;
}

void on_free(void *, void *block, size_t size, void *data)
{
	if (!recording || nfrees >= 16 || memcmp(data, "cxx-data", 8) != 0)
		return;
	frees[nfrees].block = block;
	frees[nfrees++].size = size;
}

const seen *find(const seen *v, int n, const void *p)
{
	for (int i = 0; i < n; i++)
		if (v[i].block == p)
			return &v[i];
	return nullptr;
}

struct alignas(64) wide {
	char bytes[192];
};

} // namespace

extern "C" __attribute__((noinline)) void *profiler_cxx_new(size_t n)
{
	void *p = new char[n];
	__asm__ volatile("" ::: "memory");
	return p;
}

static void test_new_delete(void **)
{
	/* A tagged call links the library's entry points, new and delete among them,
	 * into a sanitizer build's static link ahead of the sanitizer's own. */
	free(malloc(1));
	allocinfo_profiler p = {};
	p.sample_data_size = 8;
	p.initial_sample_rate = 1;
	p.on_alloc = on_alloc;
	p.on_free = on_free;
	assert_int_equal(allocinfo_profiler_attach(&p, nullptr), 0);
	assert_int_equal(allocinfo_profiler_start(), 0);
	recording = 1;
	char *a = static_cast<char *>(profiler_cxx_new(3000));
	long *b = new long(7);
	wide *c = new wide;
	int *d = new (std::nothrow) int[10];
	recording = 0;
	assert_non_null(find(allocs, nallocs, a));
	assert_int_equal(find(allocs, nallocs, a)->size, 3000);
	assert_string_equal(find(allocs, nallocs, a)->first, "profiler_cxx_new");
	assert_int_equal(find(allocs, nallocs, b)->size, sizeof(long));
	assert_int_equal(find(allocs, nallocs, c)->size, sizeof(wide));
	assert_int_equal((uintptr_t)c % 64, 0);
	assert_int_equal(find(allocs, nallocs, d)->size, 10 * sizeof(int));
	recording = 1;
	delete[] a;
	delete b;	// sized delete
	delete c;	// aligned, sized delete
	delete[] d;
	recording = 0;
	assert_int_equal(nfrees, 4);
	assert_int_equal(find(frees, nfrees, a)->size, 3000);
	assert_int_equal(find(frees, nfrees, b)->size, sizeof(long));
	assert_int_equal(find(frees, nfrees, c)->size, sizeof(wide));
	assert_int_equal(find(frees, nfrees, d)->size, 10 * sizeof(int));
	assert_int_equal(allocinfo_profiler_detach(), 0);
}

int main()
{
	const CMUnitTest tests[] = {
		cmocka_unit_test(test_new_delete),
	};
	return cmocka_run_group_tests(tests, nullptr, nullptr);
}
