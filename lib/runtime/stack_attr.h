/* SPDX-License-Identifier: MIT */
/*
 * pthread_getattr_np(), interposed (stack_attr.cpp): glibc holds the thread's lock
 * for the whole call and allocates under it, so an allocation inside must not ask
 * for the thread's stack, which takes that lock.
 */
#ifndef ALLOCINFO_STACK_ATTR_H
#define ALLOCINFO_STACK_ATTR_H

#include "internal.h"

namespace allocinfo {

/* Nonzero while this thread is inside pthread_getattr_np(): find_this_stack() then
 * answers "not known", and does not keep the answer. */
extern __thread unsigned t_in_getattr HIDDEN __attribute__((tls_model("initial-exec")));

/* Whether pc is in the interposed pthread_getattr_np(): a walk steps over its frame
 * as over libc's, to the program's caller. */
bool in_stack_attr(uintptr_t pc) HIDDEN;

} /* namespace allocinfo */

#endif
