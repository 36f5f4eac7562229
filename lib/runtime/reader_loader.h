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

} /* namespace allocinfo */

#endif
