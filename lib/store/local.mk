# SPDX-License-Identifier: MIT
# The store's layout and writers. The writers are linked into liballocinfo
# (lib/runtime/local.mk; the BPF writer in tools/bpf.mk); the /proc parsing is a
# library of its own, shared by the readers and the library's start-up.

noinst_LTLIBRARIES += lib/libprocfs.la
lib_libprocfs_la_SOURCES = lib/store/procfs.h lib/store/procfs.cpp
lib_libprocfs_la_CXXFLAGS = $(CORE_CXXFLAGS) $(COMMON_TEXT_CXXFLAGS)
