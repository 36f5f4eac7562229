/* SPDX-License-Identifier: MIT */
/*
 * Loading the library's two modules on first need: liballocinfo-reader.so
 * (lib/store/reader_module.h) and, in a build with the BPF store,
 * liballocinfo-bpf.so (lib/store/bpf_module.h). Each by the absolute path it is
 * installed at ($(pkglibdir)), or, for a library run from its build tree (the
 * tests), the build tree's copy. A secure-execution process loads only the installed
 * one.
 */
#ifndef ALLOCINFO_READER_LOADER_H
#define ALLOCINFO_READER_LOADER_H

#include "internal.h"
#include "bpf_module.h"
#include "reader_module.h"

namespace allocinfo {

/* The module's entry points, loaded once; nullptr (after one "allocinfo:" line
 * saying why) when it cannot be loaded. Not from inside malloc's start-up. */
const allocinfo_reader_v1 *reader_module() HIDDEN;
const allocinfo_bpf_module_v1 *bpf_module() HIDDEN;

/*
 * Held around every call into the reader module. A thread inside one may hold the
 * module's locks; a child forked meanwhile has no such thread, so the child's
 * handler (reader_fork_child()) has the module drop its state instead of waiting
 * for locks nobody will release. No wait in fork(): a report can take long, and
 * may be blocked writing to a pipe the forking thread reads.
 */
extern unsigned g_reader_users HIDDEN;	/* atomic */
class reader_in_use {
public:
	reader_in_use() { __atomic_add_fetch(&g_reader_users, 1, __ATOMIC_ACQ_REL); }
	~reader_in_use() { __atomic_sub_fetch(&g_reader_users, 1, __ATOMIC_RELEASE); }
	reader_in_use(const reader_in_use &) = delete;
	reader_in_use &operator=(const reader_in_use &) = delete;
};
void reader_fork_child() HIDDEN;

} /* namespace allocinfo */

#endif
