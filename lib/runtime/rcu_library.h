/* SPDX-License-Identifier: MIT */
/*
 * liburcu-bp, loaded when it is first needed. Only the callbacks chain and an
 * attached profiler are published under RCU (rcu_published.h), and most processes
 * have neither; linked, the library cost every process about 70 µs of CPU at exec
 * (Debian builds it with -z now: all its relocations are bound at load) and a few
 * mappings more for every fork to copy. It is loaded by the first callback
 * registration or profiler attachment, never from inside an allocation, and stays.
 * A process that already has it (the program uses liburcu-bp itself) has its copy
 * used from start-up on, so that fork() keeps running its fork protocol.
 */
#ifndef ALLOCINFO_RCU_LIBRARY_H
#define ALLOCINFO_RCU_LIBRARY_H

#include "internal.h"

namespace allocinfo {
namespace rcu {

struct api {
	void (*read_lock)();
	void (*read_unlock)();
	void (*synchronize)();
	void (*before_fork)();
	void (*after_fork_parent)();
	void (*after_fork_child)();
};

extern const api *g_loaded HIDDEN;

/* The library's functions, or null while it is not loaded (then nothing has been
 * published, and there is nothing to wait for). */
static inline const api *loaded()
{
	return __atomic_load_n(&g_loaded, __ATOMIC_ACQUIRE);
}

/* Loads it if it is not; false, after a message, when it cannot be had. */
bool load() HIDDEN;

/* Start-up: uses the copy the process already has, if any. */
void adopt_loaded() HIDDEN;

} /* namespace rcu */
} /* namespace allocinfo */

#endif
