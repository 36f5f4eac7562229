# SPDX-License-Identifier: MIT
# Integration tests of the library: real programs, LD_PRELOAD, header compatibility.

TESTS += tests/integration/header.sh
EXTRA_DIST += tests/integration/header.sh tests/integration/header_first.c \
	tests/integration/header_first.cpp tests/integration/header_later_gnu_source.c

# allocinfo-cc and allocinfo-c++ on what real projects hold (compile-only cases), C++
# call sites in every kind of function, and an installation at a prefix of its own.
TESTS += tests/integration/header_wrapper.sh tests/integration/header_cxx.sh \
	tests/integration/header_install.sh
EXTRA_DIST += tests/integration/header_wrapper.sh tests/integration/header_cxx.sh \
	tests/integration/header_install.sh tests/integration/header_posix_source.c \
	tests/integration/header_xopen_source.c tests/integration/header_gnu_source.c \
	tests/integration/header_c89.c tests/integration/header_decl_after_statement.c \
	tests/integration/header_mm_malloc.c tests/integration/header_jemalloc.c \
	tests/integration/header_own_declaration.c tests/integration/header_asm.S \
	tests/integration/header_cxx98.cpp tests/integration/header_inline_cxx.cpp

# The same source with the library, and with -DALLOCINFO_DISABLE and no library.
check_PROGRAMS += tests/unit/disabled tests/unit/disabled_off
tests_unit_disabled_SOURCES = tests/unit/disabled.c
tests_unit_disabled_LDADD = $(TEST_LDADD) $(DL_LIBS)
tests_unit_disabled_LDFLAGS = $(TEST_LINK_FLAGS)
tests_unit_disabled_off_SOURCES = tests/unit/disabled.c
tests_unit_disabled_off_CPPFLAGS = $(AM_CPPFLAGS) -DALLOCINFO_DISABLE
tests_unit_disabled_off_LDADD = $(DL_LIBS)
TESTS += tests/unit/disabled tests/unit/disabled_off

check_PROGRAMS += tests/unit/preload_target
tests_unit_preload_target_SOURCES = tests/unit/preload_target.c
tests_unit_preload_target_CFLAGS = $(AM_CFLAGS) -g -O1
tests_unit_preload_target_LDADD = $(DL_LIBS)
TESTS += tests/integration/preload.sh
EXTRA_DIST += tests/integration/preload.sh
