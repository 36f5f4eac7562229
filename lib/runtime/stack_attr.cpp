/* SPDX-License-Identifier: MIT */
/*
 * pthread_getattr_np(), interposed, so that an allocation inside it never asks for
 * the thread's stack.
 *
 * glibc holds the thread's lock for the whole call and allocates under it: the CPU
 * set's buffer (realloc), and for the main thread what reading /proc/self/maps
 * takes. An allocation whose caller is found by a walk (libc's, as these are) needs
 * the thread's stack, and a thread's first walk asked pthread_getattr_np() for it
 * (find_this_stack()): it waited for ever on the lock its own thread held. Every new
 * thread that asks for its own attributes before it allocates anything did so (Rust's
 * standard library asks in every thread it starts, for its stack guard), and two
 * threads asking for each other's could deadlock the same way. While this thread is
 * inside, find_this_stack() answers "not known"; the walk still finds the caller by
 * unwinding, through this function's frame (in_stack_attr()).
 */
#include "stack_attr.h"

#include <errno.h>
#include <pthread.h>

#include "next_definition.h"

/* The interposer's code, in a section of its own: the linker names its bounds. */
#define STACK_ATTR_TEXT __attribute__((section("allocinfo_stack_attr"), noinline))
extern "C" const char __start_allocinfo_stack_attr[] HIDDEN;
extern "C" const char __stop_allocinfo_stack_attr[] HIDDEN;

namespace allocinfo {

__thread unsigned t_in_getattr __attribute__((tls_model("initial-exec")));

bool in_stack_attr(uintptr_t pc)
{
	return pc >= (uintptr_t)__start_allocinfo_stack_attr &&
	       pc < (uintptr_t)__stop_allocinfo_stack_attr;
}

} /* namespace allocinfo */

using namespace allocinfo;

extern "C" EXPORT STACK_ATTR_TEXT int pthread_getattr_np(pthread_t thread, pthread_attr_t *attr)
{
	static int (*next)(pthread_t, pthread_attr_t *);
	auto fn = next_definition(&next, "pthread_getattr_np");
	if (!fn)
		return ENOSYS;
	t_in_getattr++;
	int r = fn(thread, attr);
	t_in_getattr--;
	return r;
}
