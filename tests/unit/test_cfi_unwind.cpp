// SPDX-License-Identifier: MIT
// The stack walk from .eh_frame (cfi_unwind.h), frame for frame against libgcc's
// _Unwind_Backtrace: through ordinary frames, frames whose CFA is rbp (alloca, frame
// pointers), the C library's own (qsort), a thread's start; the rows it computes;
// and what it must refuse (a signal frame, addresses without unwind tables).
#include <alloca.h>
#include <dlfcn.h>
#include <gnu/libc-version.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unwind.h>

extern "C" {
#include <cmocka.h>
}

#include "cfi_unwind.h"

using namespace allocinfo;

namespace {

constexpr int MAX = 128;
struct trace {
	int n = 0;
	uintptr_t ip[MAX];
	uintptr_t cfa[MAX];
};

bool take(void *arg, uintptr_t ip, uintptr_t cfa)
{
	auto *t = static_cast<trace *>(arg);
	if (t->n == MAX)
		return false;
	t->ip[t->n] = ip;
	t->cfa[t->n] = cfa;
	t->n++;
	return true;
}

_Unwind_Reason_Code take_libgcc(struct _Unwind_Context *ctx, void *arg)
{
	return take(arg, _Unwind_GetIP(ctx), _Unwind_GetCFA(ctx)) ? _URC_NO_REASON
								   : _URC_END_OF_STACK;
}

#if defined(__SANITIZE_THREAD__)
constexpr bool RUNNING_ON_TSAN = true;
#else
constexpr bool RUNNING_ON_TSAN = false;
#endif

trace g_ours, g_theirs;
cfi::walk_end g_end;
volatile int g_sink;

/* Both walks from one frame: their frame 0 differs only in where this function
 * called them; from frame 1 on they must agree exactly. */
[[gnu::noinline]] void capture()
{
	g_ours = trace();
	g_theirs = trace();
	g_end = cfi::walk(take, &g_ours);
	_Unwind_Backtrace(take_libgcc, &g_theirs);
	g_sink++;
}

void expect_same_walk(int at_least)
{
	assert_true(g_end == cfi::walk_end::done);
	if (g_ours.n != g_theirs.n) {
		print_error("%d frames walked, libgcc %d\n", g_ours.n, g_theirs.n);
		for (int i = 0; i < g_theirs.n; i++)
			print_error("  %d: %#lx %#lx | %#lx %#lx\n", i,
				    (unsigned long)(i < g_ours.n ? g_ours.ip[i] : 0),
				    (unsigned long)(i < g_ours.n ? g_ours.cfa[i] : 0),
				    (unsigned long)g_theirs.ip[i], (unsigned long)g_theirs.cfa[i]);
	}
	assert_int_equal(g_ours.n, g_theirs.n);
	assert_true(g_ours.n >= at_least);
	assert_int_equal(g_ours.cfa[0], g_theirs.cfa[0]);
	for (int i = 1; i < g_ours.n; i++) {
		if (g_ours.ip[i] != g_theirs.ip[i] || g_ours.cfa[i] != g_theirs.cfa[i])
			print_error("frame %d: ip %#lx cfa %#lx, libgcc ip %#lx cfa %#lx\n", i,
				    (unsigned long)g_ours.ip[i], (unsigned long)g_ours.cfa[i],
				    (unsigned long)g_theirs.ip[i], (unsigned long)g_theirs.cfa[i]);
		assert_int_equal(g_ours.ip[i], g_theirs.ip[i]);
		assert_int_equal(g_ours.cfa[i], g_theirs.cfa[i]);
	}
}

[[gnu::noinline]] int recurse(int depth)
{
	volatile char pad[40];
	pad[0] = (char)depth;
	if (depth == 0)
		capture();
	else
		g_sink += recurse(depth - 1);
	return pad[0];
}

/* A variable-sized frame: its CFA is rbp plus an offset. */
[[gnu::noinline]] int with_alloca(size_t n, int depth)
{
	char *p = static_cast<char *>(alloca(n));
	memset(p, depth, n);
	if (depth == 0)
		capture();
	else
		g_sink += with_alloca(n * 2 + 8, depth - 1);
	return p[n - 1];
}

[[gnu::noinline, gnu::optimize("no-omit-frame-pointer")]] int with_frame_pointer(int depth)
{
	volatile int x = depth;
	if (depth == 0)
		capture();
	else
		g_sink += with_frame_pointer(depth - 1);
	return x;
}

int compare_and_capture(const void *a, const void *b)
{
	static bool done;
	if (!done) {
		done = true;
		capture();
	}
	return *static_cast<const int *>(a) - *static_cast<const int *>(b);
}

void t_ordinary_frames(void **)
{
	recurse(6);
	expect_same_walk(8);
}

void t_alloca_frames(void **)
{
	with_alloca(24, 4);
	expect_same_walk(6);
}

void t_frame_pointer_frames(void **)
{
	with_frame_pointer(5);
	expect_same_walk(7);
}

/* qsort's merge sort: frames of the C library between the comparator and the test. */
void t_c_library_frames(void **)
{
	int v[64];
	for (int i = 0; i < 64; i++)
		v[i] = (i * 37) % 64;
	qsort(v, 64, sizeof(v[0]), compare_and_capture);
	expect_same_walk(5);
}

void *thread_body(void *)
{
	recurse(3);
	return nullptr;
}

/* Up to the thread's start in the C library, and no further. */
void t_thread_frames(void **)
{
	pthread_t t;
	assert_int_equal(pthread_create(&t, nullptr, thread_body, nullptr), 0);
	pthread_join(t, nullptr);
	expect_same_walk(5);
}

uintptr_t g_ra;
[[gnu::noinline]] void note_return_address()
{
	g_ra = (uintptr_t)__builtin_return_address(0);
	g_sink++;
}

[[gnu::noinline, gnu::optimize("no-omit-frame-pointer")]] void framed_caller()
{
	note_return_address();
	g_sink++;
}

/* After its prologue, a frame-pointer function's CFA is rbp + 16, rbp saved at
 * CFA - 16 and the return address at CFA - 8. */
void t_row_of_a_framed_function(void **)
{
	framed_caller();
	cfi::row r;
	assert_true(cfi::row_at(g_ra - 1, r));
	assert_int_equal(r.cfa_reg, 6);
	assert_int_equal(r.cfa_offset, 16);
	assert_int_equal(r.rbp_offset, -16);
	assert_int_equal(r.ra_offset, -8);
	assert_false(r.ra_undefined);
}

int g_data_word;

void t_rows_refused(void **)
{
	cfi::row r;
	assert_false(cfi::row_at(0, r));
	assert_false(cfi::row_at(1, r));
	assert_false(cfi::row_at((uintptr_t)&g_data_word, r));	/* no FDE covers data */
	void *m = mmap(nullptr, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(m != MAP_FAILED);
	assert_false(cfi::row_at((uintptr_t)m + 16, r));	/* in no object */
	munmap(m, 4096);
}

cfi::walk_end g_in_handler;
trace g_handler_trace;

void handler(int)
{
	g_in_handler = cfi::walk(take, &g_handler_trace);
}

/* The object holding address a. */
void *object_base(uintptr_t a)
{
	Dl_info di;
	return dladdr(reinterpret_cast<void *>(a), &di) ? di.dli_fbase : nullptr;
}

/* The signal trampoline's frame is a signal frame ('S'), described by expressions:
 * the walk gives the handler's frame and the trampoline's return address, then says
 * it cannot go on, for its caller to fall back. */
void t_signal_frame_unknown(void **)
{
	struct sigaction sa, old;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = handler;
	sigemptyset(&sa.sa_mask);
	assert_int_equal(sigaction(SIGUSR1, &sa, &old), 0);
	raise(SIGUSR1);
	sigaction(SIGUSR1, &old, nullptr);
	assert_true(g_in_handler == cfi::walk_end::unknown);
	/* The handler's frame, then (ThreadSanitizer's dispatcher in between, which calls
	 * handlers itself) the trampoline in the C library, last: a function no
	 * sanitizer intercepts names that object. */
	int n = g_handler_trace.n;
	if (!RUNNING_ON_TSAN)
		assert_int_equal(n, 2);
	assert_true(n >= 2);
	assert_true(object_base(g_handler_trace.ip[0]) == object_base((uintptr_t)&handler));
	assert_true(object_base(g_handler_trace.ip[n - 1]) ==
		    object_base((uintptr_t)&gnu_get_libc_version));
}

} /* namespace */

int main()
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_ordinary_frames),
		cmocka_unit_test(t_alloca_frames),
		cmocka_unit_test(t_frame_pointer_frames),
		cmocka_unit_test(t_c_library_frames),
		cmocka_unit_test(t_thread_frames),
		cmocka_unit_test(t_row_of_a_framed_function),
		cmocka_unit_test(t_rows_refused),
		cmocka_unit_test(t_signal_frame_unknown),
	};
	return cmocka_run_group_tests(tests, nullptr, nullptr);
}
