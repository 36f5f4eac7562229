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
	tests/integration/header_member_calls.c \
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

# One path style for both kinds of tag: a program built by the test, as a user would.
TESTS += tests/integration/report_paths.sh
EXTRA_DIST += tests/integration/report_paths.sh tests/integration/report_paths.cpp

# The README's and the user guide's report samples are what scripts/demo.sh prints.
TESTS += tests/integration/doc_samples.sh
EXTRA_DIST += tests/integration/doc_samples.sh

# The example callback libraries (Documentation/examples) on a real program, tagged
# and under LD_PRELOAD.
check_PROGRAMS += tests/integration/callbacks_prog tests/integration/callbacks_prog_plain
tests_integration_callbacks_prog_SOURCES = tests/integration/callbacks_prog.c
tests_integration_callbacks_prog_CFLAGS = $(AM_CFLAGS) -g
tests_integration_callbacks_prog_LDADD = $(TEST_LDADD) -lpthread
tests_integration_callbacks_prog_LDFLAGS = $(TEST_LINK_FLAGS) -no-install
tests_integration_callbacks_prog_plain_SOURCES = tests/integration/callbacks_prog.c
tests_integration_callbacks_prog_plain_CPPFLAGS = $(AM_CPPFLAGS) -DPLAIN_BUILD
tests_integration_callbacks_prog_plain_CFLAGS = $(AM_CFLAGS) -g
tests_integration_callbacks_prog_plain_LDADD = -lpthread
TESTS += tests/integration/callbacks.sh
EXTRA_DIST += tests/integration/callbacks.sh

# allocinfo on top of other allocators: one program built with the header, alone
# and linked with each allocator ahead of the library; underneath.sh runs it with
# the allocators and the library preloaded in every order.
if ENABLE_UNIT
UNDERNEATH_CPP = $(UNIT_CPPFLAGS)
# underneath.c's own mmap() is exported, so that the library's calls reach it.
UNDERNEATH_LINK = $(TEST_LINK_FLAGS) -Wl,--no-as-needed -Wl,--export-dynamic-symbol=mmap
check_PROGRAMS += tests/unit/underneath
tests_unit_underneath_SOURCES = tests/unit/underneath.c
tests_unit_underneath_CPPFLAGS = $(UNDERNEATH_CPP)
tests_unit_underneath_LDADD = $(UNIT_LDADD) $(DL_LIBS)
tests_unit_underneath_LDFLAGS = $(UNDERNEATH_LINK)
check_PROGRAMS += tests/unit/underneath_api
tests_unit_underneath_api_SOURCES = tests/unit/underneath_api.c
tests_unit_underneath_api_CPPFLAGS = $(UNDERNEATH_CPP)
tests_unit_underneath_api_LDADD = $(UNIT_LDADD) $(DL_LIBS) -lpthread
tests_unit_underneath_api_LDFLAGS = $(TEST_LINK_FLAGS)
# underneath_api loads it with dlopen: built without the header.
check_LTLIBRARIES += tests/unit/libapiplugin.la
tests_unit_libapiplugin_la_SOURCES = tests/unit/api_plugin.c
tests_unit_libapiplugin_la_CFLAGS = $(AM_CFLAGS) -g -O1
tests_unit_libapiplugin_la_LDFLAGS = -rpath /nowhere -avoid-version
check_PROGRAMS += tests/unit/underneath_report
tests_unit_underneath_report_SOURCES = tests/unit/underneath_report.c
tests_unit_underneath_report_CPPFLAGS = $(UNDERNEATH_CPP)
tests_unit_underneath_report_LDADD = $(UNIT_LDADD) $(DL_LIBS)
tests_unit_underneath_report_LDFLAGS = $(TEST_LINK_FLAGS)
# underneath_report loads it with dlopen: built without the header.
check_LTLIBRARIES += tests/unit/libcxxglobals.la
tests_unit_libcxxglobals_la_SOURCES = tests/unit/cxx_globals_plugin.cpp
tests_unit_libcxxglobals_la_CXXFLAGS = $(AM_CXXFLAGS) -g -O1
tests_unit_libcxxglobals_la_LDFLAGS = -rpath /nowhere -avoid-version
check_PROGRAMS += tests/unit/underneath_cxx
tests_unit_underneath_cxx_SOURCES = tests/unit/underneath_cxx.cpp
tests_unit_underneath_cxx_CPPFLAGS = $(UNDERNEATH_CPP)
tests_unit_underneath_cxx_LDADD = $(UNIT_LDADD) $(DL_LIBS)
tests_unit_underneath_cxx_LDFLAGS = $(UNDERNEATH_LINK)
# A library's copies of free, malloc and realloc (libxml2's xmlFree), which the
# program holds as copies the loader made (R_X86_64_COPY).
check_LTLIBRARIES += tests/unit/libcopiedpointers.la
tests_unit_libcopiedpointers_la_SOURCES = tests/unit/copied_pointers.c
tests_unit_libcopiedpointers_la_CFLAGS = $(AM_CFLAGS) -g -O1
tests_unit_libcopiedpointers_la_LDFLAGS = -rpath /nowhere -avoid-version
check_PROGRAMS += tests/unit/underneath_copied
tests_unit_underneath_copied_SOURCES = tests/unit/underneath_copied.c
tests_unit_underneath_copied_CPPFLAGS = $(UNDERNEATH_CPP)
tests_unit_underneath_copied_CFLAGS = $(AM_CFLAGS) -g -O1 -fPIE
tests_unit_underneath_copied_LDADD = tests/unit/libcopiedpointers.la $(UNIT_LDADD)
tests_unit_underneath_copied_LDFLAGS = $(TEST_LINK_FLAGS)
if HAVE_JEMALLOC
check_PROGRAMS += tests/unit/underneath_jemalloc
tests_unit_underneath_jemalloc_SOURCES = tests/unit/underneath.c
tests_unit_underneath_jemalloc_CPPFLAGS = $(UNDERNEATH_CPP)
tests_unit_underneath_jemalloc_LDADD = -ljemalloc $(UNIT_LDADD) $(DL_LIBS)
tests_unit_underneath_jemalloc_LDFLAGS = $(UNDERNEATH_LINK)
check_PROGRAMS += tests/unit/underneath_api_jemalloc
tests_unit_underneath_api_jemalloc_SOURCES = tests/unit/underneath_api.c
tests_unit_underneath_api_jemalloc_CPPFLAGS = $(UNDERNEATH_CPP)
tests_unit_underneath_api_jemalloc_LDADD = -ljemalloc $(UNIT_LDADD) $(DL_LIBS) -lpthread
tests_unit_underneath_api_jemalloc_LDFLAGS = $(TEST_LINK_FLAGS)
# Built without the header and without the library, linked with jemalloc only.
check_PROGRAMS += tests/unit/underneath_plain
tests_unit_underneath_plain_SOURCES = tests/unit/underneath_plain.c
tests_unit_underneath_plain_CFLAGS = $(AM_CFLAGS) -g -O1
tests_unit_underneath_plain_LDADD = -ljemalloc $(DL_LIBS)
endif
if HAVE_TCMALLOC
check_PROGRAMS += tests/unit/underneath_tcmalloc
tests_unit_underneath_tcmalloc_SOURCES = tests/unit/underneath.c
tests_unit_underneath_tcmalloc_CPPFLAGS = $(UNDERNEATH_CPP)
tests_unit_underneath_tcmalloc_LDADD = -ltcmalloc_minimal $(UNIT_LDADD) $(DL_LIBS)
tests_unit_underneath_tcmalloc_LDFLAGS = $(UNDERNEATH_LINK)
check_PROGRAMS += tests/unit/underneath_api_tcmalloc
tests_unit_underneath_api_tcmalloc_SOURCES = tests/unit/underneath_api.c
tests_unit_underneath_api_tcmalloc_CPPFLAGS = $(UNDERNEATH_CPP)
tests_unit_underneath_api_tcmalloc_LDADD = -ltcmalloc_minimal $(UNIT_LDADD) $(DL_LIBS) -lpthread
tests_unit_underneath_api_tcmalloc_LDFLAGS = $(TEST_LINK_FLAGS)
endif
if HAVE_MIMALLOC
check_PROGRAMS += tests/unit/underneath_mimalloc
tests_unit_underneath_mimalloc_SOURCES = tests/unit/underneath.c
tests_unit_underneath_mimalloc_CPPFLAGS = $(UNDERNEATH_CPP)
tests_unit_underneath_mimalloc_LDADD = -lmimalloc $(UNIT_LDADD) $(DL_LIBS)
tests_unit_underneath_mimalloc_LDFLAGS = $(UNDERNEATH_LINK)
check_PROGRAMS += tests/unit/underneath_api_mimalloc
tests_unit_underneath_api_mimalloc_SOURCES = tests/unit/underneath_api.c
tests_unit_underneath_api_mimalloc_CPPFLAGS = $(UNDERNEATH_CPP)
tests_unit_underneath_api_mimalloc_LDADD = -lmimalloc $(UNIT_LDADD) $(DL_LIBS) -lpthread
tests_unit_underneath_api_mimalloc_LDFLAGS = $(TEST_LINK_FLAGS)
endif
TESTS += tests/integration/underneath.sh
endif
EXTRA_DIST += tests/integration/underneath.sh
# A program whose malloc and free are its own (built into the executable): left to
# them, uncounted. Built by the script, with cc and allocinfo-cc.
TESTS += tests/integration/program_allocator.sh
EXTRA_DIST += tests/integration/program_allocator.sh tests/integration/program_allocator_prog.c
# Programs built with allocinfo-cc and a sanitizer (address, thread, leak, undefined;
# gcc and clang): counted, clean, and the sanitizers' reports still name the lines.
# Built by the script.
TESTS += tests/integration/sanitizers.sh
EXTRA_DIST += tests/integration/sanitizers.sh tests/integration/sanitized.c \
	tests/integration/sanitized_leaks.c tests/integration/sanitized_leaks.cpp \
	tests/integration/sanitized_bugs.c tests/integration/sanitized_rbp.c \
	tests/integration/sanitized_mismatch.cpp \
	tests/integration/checkers_lib.sh
# The same under Valgrind: memcheck's findings those of the plain build, callgrind's
# run counted.
TESTS += tests/integration/valgrind_tools.sh
EXTRA_DIST += tests/integration/valgrind_tools.sh
TESTS += tests/integration/common_text.sh
EXTRA_DIST += tests/integration/common_text.sh scripts/function_hits.sh
# A malloc wrapper that passes every call on to the next malloc (libmemusage.so's
# kind), preloaded before or after the library by program_allocator.sh and
# underneath.sh.
check_LTLIBRARIES += tests/integration/libpasson.la
tests_integration_libpasson_la_SOURCES = tests/integration/pass_on_wrapper.c
tests_integration_libpasson_la_CFLAGS = $(AM_CFLAGS) -g -O1
tests_integration_libpasson_la_LIBADD = $(DL_LIBS)
tests_integration_libpasson_la_LDFLAGS = -rpath /nowhere -avoid-version
# An allocator whose functions call one another by name (Electric Fence's kind),
# preloaded after the library by underneath.sh. -fno-builtin: the compiler would make
# its calloc's malloc and memset a call of calloc.
check_LTLIBRARIES += tests/integration/libselfcalling.la
tests_integration_libselfcalling_la_SOURCES = tests/integration/self_calling_alloc.c
tests_integration_libselfcalling_la_CFLAGS = $(AM_CFLAGS) -g -O2 -fno-builtin
tests_integration_libselfcalling_la_LDFLAGS = -rpath /nowhere -avoid-version
# Declared wrappers (ALLOCINFO_WRAPPERS): a library of nested wrappers reached through
# function pointers, and a program of the same, each built without and with the header.
check_LTLIBRARIES += tests/integration/libwrapfix_plain.la tests/integration/libwrapfix_tagged.la
WRAPFIX_SRC = tests/integration/wrappers_lib.c tests/integration/wrappers_lib.h
tests_integration_libwrapfix_plain_la_SOURCES = $(WRAPFIX_SRC)
tests_integration_libwrapfix_plain_la_CFLAGS = $(AM_CFLAGS) -g -O2
tests_integration_libwrapfix_plain_la_LDFLAGS = -rpath /nowhere -avoid-version -module
tests_integration_libwrapfix_tagged_la_SOURCES = $(WRAPFIX_SRC)
tests_integration_libwrapfix_tagged_la_CPPFLAGS = $(AM_CPPFLAGS) -include allocinfo.h
tests_integration_libwrapfix_tagged_la_CFLAGS = $(AM_CFLAGS) -g -O2
tests_integration_libwrapfix_tagged_la_LDFLAGS = -rpath /nowhere -avoid-version -module
check_PROGRAMS += tests/integration/wrappers_prog_plain tests/integration/wrappers_prog_tagged
tests_integration_wrappers_prog_plain_SOURCES = tests/integration/wrappers_prog.c \
	tests/integration/wrappers_lib.h
tests_integration_wrappers_prog_plain_CFLAGS = $(AM_CFLAGS) -g -O2
tests_integration_wrappers_prog_plain_LDADD = $(DL_LIBS)
tests_integration_wrappers_prog_tagged_SOURCES = tests/integration/wrappers_prog.c \
	tests/integration/wrappers_lib.h
tests_integration_wrappers_prog_tagged_CPPFLAGS = $(AM_CPPFLAGS) -include allocinfo.h
tests_integration_wrappers_prog_tagged_CFLAGS = $(AM_CFLAGS) -g -O2
tests_integration_wrappers_prog_tagged_LDADD = $(TEST_LDADD) $(DL_LIBS)
tests_integration_wrappers_prog_tagged_LDFLAGS = $(TEST_LINK_FLAGS)
TESTS += tests/integration/wrappers.sh
EXTRA_DIST += tests/integration/wrappers.sh

# Walks out of the C library's stdio without libgcc_s, and a frame that needs it.
check_PROGRAMS += tests/integration/unwind_prog_plain tests/integration/unwind_prog_tagged
tests_integration_unwind_prog_plain_SOURCES = tests/integration/unwind_prog.c
tests_integration_unwind_prog_plain_CFLAGS = $(AM_CFLAGS) -g -O2
tests_integration_unwind_prog_plain_LDADD = $(DL_LIBS)
tests_integration_unwind_prog_tagged_SOURCES = tests/integration/unwind_prog.c
tests_integration_unwind_prog_tagged_CPPFLAGS = $(AM_CPPFLAGS) -include allocinfo.h
tests_integration_unwind_prog_tagged_CFLAGS = $(AM_CFLAGS) -g -O2
tests_integration_unwind_prog_tagged_LDADD = $(TEST_LDADD) $(DL_LIBS)
tests_integration_unwind_prog_tagged_LDFLAGS = $(TEST_LINK_FLAGS)
TESTS += tests/integration/unwind_walk.sh
EXTRA_DIST += tests/integration/unwind_walk.sh

# Allocators of the program's own described in liballocs' language
# (ALLOCINFO_SUBALLOC_FNS): a pool library that never calls malloc, used by a program
# preloaded and by one built with the header; allocinfo-cc's options on the same pool
# linked into the program (suballoc_cc.sh).
check_LTLIBRARIES += tests/integration/libpoolfix.la
tests_integration_libpoolfix_la_SOURCES = tests/integration/suballoc_pool.c \
	tests/integration/suballoc_pool.h
tests_integration_libpoolfix_la_CFLAGS = $(AM_CFLAGS) -g -O2
tests_integration_libpoolfix_la_LDFLAGS = -rpath /nowhere -avoid-version
check_PROGRAMS += tests/integration/suballoc_prog_plain tests/integration/suballoc_prog_tagged
tests_integration_suballoc_prog_plain_SOURCES = tests/integration/suballoc_prog.c \
	tests/integration/suballoc_pool.h
tests_integration_suballoc_prog_plain_CFLAGS = $(AM_CFLAGS) -g -O2
tests_integration_suballoc_prog_plain_LDADD = tests/integration/libpoolfix.la $(DL_LIBS)
tests_integration_suballoc_prog_plain_LDFLAGS = -no-install
tests_integration_suballoc_prog_tagged_SOURCES = tests/integration/suballoc_prog.c \
	tests/integration/suballoc_pool.h
tests_integration_suballoc_prog_tagged_CPPFLAGS = $(AM_CPPFLAGS) -include allocinfo.h
tests_integration_suballoc_prog_tagged_CFLAGS = $(AM_CFLAGS) -g -O2
tests_integration_suballoc_prog_tagged_LDADD = tests/integration/libpoolfix.la $(TEST_LDADD) \
	$(DL_LIBS)
tests_integration_suballoc_prog_tagged_LDFLAGS = -no-install $(TEST_LINK_FLAGS)
TESTS += tests/integration/suballoc.sh tests/integration/suballoc_cc.sh
EXTRA_DIST += tests/integration/suballoc.sh tests/integration/suballoc_cc.sh

# The standard libraries as wrappers: one C++ program at -O0 and -O2, with and without
# the header.
check_PROGRAMS += tests/integration/stdlib_prog_O0_plain tests/integration/stdlib_prog_O2_plain \
	tests/integration/stdlib_prog_O0_tagged tests/integration/stdlib_prog_O2_tagged
tests_integration_stdlib_prog_O0_plain_SOURCES = tests/integration/stdlib_prog.cpp
tests_integration_stdlib_prog_O0_plain_CXXFLAGS = $(AM_CXXFLAGS) -g -O0
tests_integration_stdlib_prog_O0_plain_LDADD = $(DL_LIBS)
tests_integration_stdlib_prog_O2_plain_SOURCES = tests/integration/stdlib_prog.cpp
tests_integration_stdlib_prog_O2_plain_CXXFLAGS = $(AM_CXXFLAGS) -g -O2
tests_integration_stdlib_prog_O2_plain_LDADD = $(DL_LIBS)
tests_integration_stdlib_prog_O0_tagged_SOURCES = tests/integration/stdlib_prog.cpp
tests_integration_stdlib_prog_O0_tagged_CPPFLAGS = $(AM_CPPFLAGS) -include allocinfo.h
tests_integration_stdlib_prog_O0_tagged_CXXFLAGS = $(AM_CXXFLAGS) -g -O0
tests_integration_stdlib_prog_O0_tagged_LDADD = $(TEST_LDADD) $(DL_LIBS)
tests_integration_stdlib_prog_O0_tagged_LDFLAGS = $(TEST_LINK_FLAGS)
tests_integration_stdlib_prog_O2_tagged_SOURCES = tests/integration/stdlib_prog.cpp
tests_integration_stdlib_prog_O2_tagged_CPPFLAGS = $(AM_CPPFLAGS) -include allocinfo.h
tests_integration_stdlib_prog_O2_tagged_CXXFLAGS = $(AM_CXXFLAGS) -g -O2
tests_integration_stdlib_prog_O2_tagged_LDADD = $(TEST_LDADD) $(DL_LIBS)
tests_integration_stdlib_prog_O2_tagged_LDFLAGS = $(TEST_LINK_FLAGS)
TESTS += tests/integration/stdlib_wrappers.sh
EXTRA_DIST += tests/integration/stdlib_wrappers.sh

# Wrappers known by name, their tagged calls through the header's helpers: C and C++,
# -O0 and -O2, on a thread and on a coroutine's stack.
KNOWN_WRAPPERS = tests/integration/known_wrappers_c_O0 tests/integration/known_wrappers_c_O2 \
	tests/integration/known_wrappers_cxx_O0 tests/integration/known_wrappers_cxx_O2
check_PROGRAMS += $(KNOWN_WRAPPERS)
KNOWN_WRAPPERS_CPP = $(AM_CPPFLAGS) -include allocinfo.h
KNOWN_WRAPPERS_LDADD = $(TEST_LDADD)
tests_integration_known_wrappers_c_O0_SOURCES = tests/integration/known_wrappers_prog.c
tests_integration_known_wrappers_c_O0_CPPFLAGS = $(KNOWN_WRAPPERS_CPP)
tests_integration_known_wrappers_c_O0_CFLAGS = $(AM_CFLAGS) -g -O0 -pthread
tests_integration_known_wrappers_c_O0_LDADD = $(KNOWN_WRAPPERS_LDADD)
tests_integration_known_wrappers_c_O0_LDFLAGS = $(TEST_LINK_FLAGS) -pthread
tests_integration_known_wrappers_c_O2_SOURCES = tests/integration/known_wrappers_prog.c
tests_integration_known_wrappers_c_O2_CPPFLAGS = $(KNOWN_WRAPPERS_CPP)
tests_integration_known_wrappers_c_O2_CFLAGS = $(AM_CFLAGS) -g -O2 -pthread
tests_integration_known_wrappers_c_O2_LDADD = $(KNOWN_WRAPPERS_LDADD)
tests_integration_known_wrappers_c_O2_LDFLAGS = $(TEST_LINK_FLAGS) -pthread
tests_integration_known_wrappers_cxx_O0_SOURCES = tests/integration/known_wrappers_prog.cpp
tests_integration_known_wrappers_cxx_O0_CPPFLAGS = $(KNOWN_WRAPPERS_CPP)
tests_integration_known_wrappers_cxx_O0_CXXFLAGS = $(AM_CXXFLAGS) -g -O0 -pthread
tests_integration_known_wrappers_cxx_O0_LDADD = $(KNOWN_WRAPPERS_LDADD)
tests_integration_known_wrappers_cxx_O0_LDFLAGS = $(TEST_LINK_FLAGS) -pthread
tests_integration_known_wrappers_cxx_O2_SOURCES = tests/integration/known_wrappers_prog.cpp
tests_integration_known_wrappers_cxx_O2_CPPFLAGS = $(KNOWN_WRAPPERS_CPP)
tests_integration_known_wrappers_cxx_O2_CXXFLAGS = $(AM_CXXFLAGS) -g -O2 -pthread
tests_integration_known_wrappers_cxx_O2_LDADD = $(KNOWN_WRAPPERS_LDADD)
tests_integration_known_wrappers_cxx_O2_LDFLAGS = $(TEST_LINK_FLAGS) -pthread
TESTS += tests/integration/known_wrappers.sh
EXTRA_DIST += tests/integration/known_wrappers.sh tests/integration/known_wrappers_prog.c

# allocinfo -p PID --addr: a program holding blocks at known lines.
check_PROGRAMS += tests/integration/addr_prog
tests_integration_addr_prog_SOURCES = tests/integration/addr_prog.c
tests_integration_addr_prog_CPPFLAGS = $(AM_CPPFLAGS) -include allocinfo.h
tests_integration_addr_prog_LDADD = $(TEST_LDADD)
tests_integration_addr_prog_LDFLAGS = $(TEST_LINK_FLAGS)
TESTS += tests/integration/pointer_addr.sh
EXTRA_DIST += tests/integration/pointer_addr.sh

# The sampling profiler's hooks under LD_PRELOAD, with each walker, under
# ALLOCINFO_DEBUG and over other allocators: a profiler loaded by ALLOCINFO_CALLBACKS.
check_PROGRAMS += tests/integration/profiler_hooks_prog
tests_integration_profiler_hooks_prog_SOURCES = tests/integration/profiler_hooks_prog.c
tests_integration_profiler_hooks_prog_CFLAGS = $(AM_CFLAGS) -g -O1 -fno-omit-frame-pointer
tests_integration_profiler_hooks_prog_LDFLAGS = -rdynamic -no-install
check_LTLIBRARIES += tests/integration/libprofilerhooks.la
tests_integration_libprofilerhooks_la_SOURCES = tests/integration/profiler_hooks_lib.c
tests_integration_libprofilerhooks_la_LDFLAGS = -module -avoid-version -rpath /nowhere $(DL_LIBS)
TESTS += tests/integration/profiler_hooks.sh
EXTRA_DIST += tests/integration/profiler_hooks.sh
