/* SPDX-License-Identifier: MIT */
/*
 * The environment variables that control allocinfo (ALLOCINFO, ALLOCINFO_STORE,
 * ALLOCINFO_DEBUG, ALLOCINFO_HEAP), read once from `environ` without allocating: they
 * are read from inside the first malloc call, possibly before the C library is fully
 * initialised. A secure-execution process reads none of them: it runs as defaults.
 */
#ifndef ALLOCINFO_OPTIONS_H
#define ALLOCINFO_OPTIONS_H

#include "internal.h"

namespace allocinfo {

enum class profiling_mode { on, off, never };
enum class store_kind { automatic, bpf, shm, none };
enum class heap_kind { own, glibc };

struct options {
	profiling_mode mode = profiling_mode::on;
	store_kind store = store_kind::automatic;
	bool debug = false;
	heap_kind heap = heap_kind::own;
};

/* Parses the environment; a malformed value gets one "allocinfo:" line on stderr
 * naming the variable and the value, and the default. */
options read_options() HIDDEN;

/* Looks a variable up in `environ` without allocating; NULL when unset, and always
 * NULL in a secure-execution process (AT_SECURE: setuid, setgid, file capabilities).
 * Every ALLOCINFO_* variable the library reads goes through here. */
const char *find_env(const char *name) HIDDEN;

/* True in a secure-execution process (getauxval(AT_SECURE)); readable from inside
 * the first malloc. */
bool secure_execution() HIDDEN;

/* ALLOCINFO_HEAP is in the environment (whatever its value): over another allocator
 * the small-block heap can exist only then (init.cpp), and routing hands out entry
 * points without its tests otherwise (routed_entry()). Read once, by whichever asks
 * first (routing comes before the options are read): a program that changes its
 * environment later changes neither. */
bool heap_variable_set() HIDDEN;

} /* namespace allocinfo */

#endif
