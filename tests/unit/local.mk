# SPDX-License-Identifier: MIT
# CMocka tests of the library, the renderers and the symbolizer.

if ENABLE_UNIT

UNIT_CPPFLAGS = $(AM_CPPFLAGS) $(CMOCKA_CFLAGS) -I$(top_srcdir)/tests/unit
UNIT_LDADD = tests/unit/libsitereport.la $(TEST_LDADD) $(CMOCKA_LIBS)

# Reads this process's report for the tests, and runs the test again as a child;
# built with the header but no macros.
check_LTLIBRARIES += tests/unit/libsitereport.la
tests_unit_libsitereport_la_SOURCES = tests/unit/site_report.h tests/unit/site_report.c \
	tests/unit/spawn_self.h tests/unit/spawn_self.c
tests_unit_libsitereport_la_CPPFLAGS = $(UNIT_CPPFLAGS)

# A library built without allocinfo.h, as third-party code is.
check_LTLIBRARIES += tests/unit/libplain.la
tests_unit_libplain_la_SOURCES = tests/unit/plain.h tests/unit/plain.c
tests_unit_libplain_la_CFLAGS = $(AM_CFLAGS) -g -O1
tests_unit_libplain_la_LDFLAGS = -rpath /nowhere -avoid-version

check_PROGRAMS += tests/unit/test_sites
tests_unit_test_sites_SOURCES = tests/unit/test_sites.c
tests_unit_test_sites_CPPFLAGS = $(UNIT_CPPFLAGS)
tests_unit_test_sites_LDADD = tests/unit/libplain.la $(UNIT_LDADD)
tests_unit_test_sites_LDFLAGS = $(TEST_LINK_FLAGS)
TESTS += tests/unit/test_sites

check_PROGRAMS += tests/unit/test_report
tests_unit_test_report_SOURCES = tests/unit/test_report.cpp
tests_unit_test_report_CPPFLAGS = $(UNIT_CPPFLAGS)
tests_unit_test_report_CXXFLAGS = $(AM_CXXFLAGS) -fno-exceptions -fno-rtti
tests_unit_test_report_LDADD = lib/libreader.la $(CMOCKA_LIBS)
TESTS += tests/unit/test_report

check_PROGRAMS += tests/unit/test_profile_read
tests_unit_test_profile_read_SOURCES = tests/unit/test_profile_read.cpp
tests_unit_test_profile_read_CPPFLAGS = $(UNIT_CPPFLAGS)
tests_unit_test_profile_read_CXXFLAGS = $(AM_CXXFLAGS) -fno-exceptions -fno-rtti
tests_unit_test_profile_read_LDADD = lib/libreader.la $(CMOCKA_LIBS)
TESTS += tests/unit/test_profile_read

check_PROGRAMS += tests/unit/test_site_table
tests_unit_test_site_table_SOURCES = tests/unit/test_site_table.cpp
tests_unit_test_site_table_CPPFLAGS = $(UNIT_CPPFLAGS)
tests_unit_test_site_table_CXXFLAGS = $(AM_CXXFLAGS) -fno-exceptions -fno-rtti
tests_unit_test_site_table_LDADD = lib/libreader.la $(CMOCKA_LIBS)
TESTS += tests/unit/test_site_table

check_LTLIBRARIES += tests/unit/libsymfixture.la
tests_unit_libsymfixture_la_SOURCES = tests/unit/symbolize_fixture.c \
	tests/unit/symbolize_fixture_cxx.cpp
tests_unit_libsymfixture_la_CFLAGS = $(AM_CFLAGS) -g -O1
tests_unit_libsymfixture_la_CXXFLAGS = $(AM_CXXFLAGS) -O1 -gdwarf-4 -fdebug-types-section \
	-fno-exceptions -fno-rtti
tests_unit_libsymfixture_la_LDFLAGS = -rpath /nowhere -avoid-version -module

check_PROGRAMS += tests/unit/test_line_table
tests_unit_test_line_table_SOURCES = tests/unit/test_line_table.cpp
tests_unit_test_line_table_CPPFLAGS = $(UNIT_CPPFLAGS) $(LIBDW_CFLAGS)
tests_unit_test_line_table_CXXFLAGS = $(AM_CXXFLAGS) -fno-exceptions -fno-rtti
tests_unit_test_line_table_LDADD = lib/libreader.la $(CMOCKA_LIBS)
TESTS += tests/unit/test_line_table

check_PROGRAMS += tests/unit/test_symbolize
tests_unit_test_symbolize_SOURCES = tests/unit/test_symbolize.cpp
tests_unit_test_symbolize_CPPFLAGS = $(UNIT_CPPFLAGS)
tests_unit_test_symbolize_CXXFLAGS = $(AM_CXXFLAGS) -fno-exceptions -fno-rtti
tests_unit_test_symbolize_LDADD = lib/libreader.la $(CMOCKA_LIBS) $(DL_LIBS)
TESTS += tests/unit/test_symbolize
AM_TESTS_ENVIRONMENT += SYMFIXTURE='$(abs_top_builddir)/tests/unit/.libs/libsymfixture.so'; export SYMFIXTURE;

endif

if ENABLE_UNIT
check_PROGRAMS += tests/unit/test_cxx
tests_unit_test_cxx_SOURCES = tests/unit/test_cxx.cpp
tests_unit_test_cxx_CPPFLAGS = $(UNIT_CPPFLAGS)
tests_unit_test_cxx_CXXFLAGS = $(AM_CXXFLAGS) -g -O1
tests_unit_test_cxx_LDADD = $(UNIT_LDADD)
tests_unit_test_cxx_LDFLAGS = $(TEST_LINK_FLAGS)
TESTS += tests/unit/test_cxx
endif

if ENABLE_UNIT
check_PROGRAMS += tests/unit/test_threads tests/unit/test_control
tests_unit_test_threads_SOURCES = tests/unit/test_threads.c
tests_unit_test_threads_CPPFLAGS = $(UNIT_CPPFLAGS)
tests_unit_test_threads_LDADD = $(UNIT_LDADD) -lpthread
tests_unit_test_threads_LDFLAGS = $(TEST_LINK_FLAGS)
tests_unit_test_control_SOURCES = tests/unit/test_control.c
tests_unit_test_control_CPPFLAGS = $(UNIT_CPPFLAGS)
tests_unit_test_control_LDADD = $(UNIT_LDADD)
tests_unit_test_control_LDFLAGS = $(TEST_LINK_FLAGS)
TESTS += tests/unit/test_threads tests/unit/test_control

check_PROGRAMS += tests/unit/test_pointer_info
tests_unit_test_pointer_info_SOURCES = tests/unit/test_pointer_info.c
tests_unit_test_pointer_info_CPPFLAGS = $(UNIT_CPPFLAGS)
tests_unit_test_pointer_info_CFLAGS = $(AM_CFLAGS) -g
tests_unit_test_pointer_info_LDADD = $(UNIT_LDADD) -lpthread
tests_unit_test_pointer_info_LDFLAGS = $(TEST_LINK_FLAGS)
TESTS += tests/unit/test_pointer_info

check_PROGRAMS += tests/unit/test_allocator
tests_unit_test_allocator_SOURCES = tests/unit/test_allocator.c
tests_unit_test_allocator_CPPFLAGS = $(UNIT_CPPFLAGS)
tests_unit_test_allocator_LDADD = $(UNIT_LDADD)
tests_unit_test_allocator_LDFLAGS = $(TEST_LINK_FLAGS)
TESTS += tests/unit/test_allocator

check_PROGRAMS += tests/unit/test_inline
tests_unit_test_inline_SOURCES = tests/unit/test_inline.c
tests_unit_test_inline_CPPFLAGS = $(UNIT_CPPFLAGS)
tests_unit_test_inline_LDADD = $(UNIT_LDADD) -lpthread
tests_unit_test_inline_LDFLAGS = $(TEST_LINK_FLAGS) \
	-Wl,--wrap=allocinfo_malloc -Wl,--wrap=allocinfo_calloc \
	-Wl,--wrap=allocinfo_strdup -Wl,--wrap=allocinfo_strndup
TESTS += tests/unit/test_inline

check_PROGRAMS += tests/unit/test_shards
tests_unit_test_shards_SOURCES = tests/unit/test_shards.c
tests_unit_test_shards_CPPFLAGS = $(UNIT_CPPFLAGS)
tests_unit_test_shards_LDADD = $(UNIT_LDADD) -lpthread
tests_unit_test_shards_LDFLAGS = $(TEST_LINK_FLAGS)
TESTS += tests/unit/test_shards

check_PROGRAMS += tests/unit/test_small_heap
tests_unit_test_small_heap_SOURCES = tests/unit/test_small_heap.c
tests_unit_test_small_heap_CPPFLAGS = $(UNIT_CPPFLAGS)
tests_unit_test_small_heap_LDADD = $(UNIT_LDADD) -lpthread
tests_unit_test_small_heap_LDFLAGS = $(TEST_LINK_FLAGS)
TESTS += tests/unit/test_small_heap

check_PROGRAMS += tests/unit/test_foreign_blocks
tests_unit_test_foreign_blocks_SOURCES = tests/unit/test_foreign_blocks.c
tests_unit_test_foreign_blocks_CPPFLAGS = $(UNIT_CPPFLAGS)
tests_unit_test_foreign_blocks_LDADD = $(UNIT_LDADD)
tests_unit_test_foreign_blocks_LDFLAGS = $(TEST_LINK_FLAGS)
TESTS += tests/unit/test_foreign_blocks

check_PROGRAMS += tests/unit/test_release_debug_info
tests_unit_test_release_debug_info_SOURCES = tests/unit/test_release_debug_info.c
tests_unit_test_release_debug_info_CPPFLAGS = $(UNIT_CPPFLAGS)
tests_unit_test_release_debug_info_LDADD = $(UNIT_LDADD)
tests_unit_test_release_debug_info_LDFLAGS = $(TEST_LINK_FLAGS)
TESTS += tests/unit/test_release_debug_info

check_PROGRAMS += tests/unit/test_heap_misuse
tests_unit_test_heap_misuse_SOURCES = tests/unit/test_heap_misuse.c
tests_unit_test_heap_misuse_CPPFLAGS = $(UNIT_CPPFLAGS)
tests_unit_test_heap_misuse_LDADD = $(UNIT_LDADD) -lpthread
tests_unit_test_heap_misuse_LDFLAGS = $(TEST_LINK_FLAGS)
TESTS += tests/unit/test_heap_misuse

check_PROGRAMS += tests/unit/test_heap_memory
tests_unit_test_heap_memory_SOURCES = tests/unit/test_heap_memory.c tests/proc_status.h
tests_unit_test_heap_memory_CPPFLAGS = $(UNIT_CPPFLAGS)
tests_unit_test_heap_memory_LDADD = $(UNIT_LDADD) -lpthread
tests_unit_test_heap_memory_LDFLAGS = $(TEST_LINK_FLAGS)
TESTS += tests/unit/test_heap_memory

check_PROGRAMS += tests/unit/test_table_pages
tests_unit_test_table_pages_SOURCES = tests/unit/test_table_pages.c
tests_unit_test_table_pages_CPPFLAGS = $(UNIT_CPPFLAGS)
tests_unit_test_table_pages_LDADD = $(UNIT_LDADD)
tests_unit_test_table_pages_LDFLAGS = $(TEST_LINK_FLAGS)
TESTS += tests/unit/test_table_pages
endif

if ENABLE_UNIT
# A plugin built with the header, loaded with dlopen. It is not linked with the
# library: it binds to the one the program has (static under sanitizers).
check_LTLIBRARIES += tests/unit/libplugin.la
tests_unit_libplugin_la_SOURCES = tests/unit/plugin.c
tests_unit_libplugin_la_CFLAGS = $(AM_CFLAGS) -g
tests_unit_libplugin_la_LDFLAGS = -rpath /nowhere -avoid-version -module
AM_TESTS_ENVIRONMENT += PLUGIN='$(abs_top_builddir)/tests/unit/.libs/libplugin.so'; export PLUGIN;

# A library whose destructor dlcloses the plugin: dlclose inside dlclose.
check_LTLIBRARIES += tests/unit/libnested.la
tests_unit_libnested_la_SOURCES = tests/unit/nested.c
tests_unit_libnested_la_CFLAGS = $(AM_CFLAGS) -g
tests_unit_libnested_la_LDFLAGS = -rpath /nowhere -avoid-version -module
tests_unit_libnested_la_LIBADD = $(DL_LIBS)
AM_TESTS_ENVIRONMENT += NESTED='$(abs_top_builddir)/tests/unit/.libs/libnested.so'; export NESTED;

check_PROGRAMS += tests/unit/test_dlopen tests/unit/test_process
tests_unit_test_dlopen_SOURCES = tests/unit/test_dlopen.c tests/unit/dl_util.h \
	tests/unit/report_check.h
tests_unit_test_dlopen_CPPFLAGS = $(UNIT_CPPFLAGS)
tests_unit_test_dlopen_LDADD = $(UNIT_LDADD) $(DL_LIBS) -lpthread
tests_unit_test_dlopen_LDFLAGS = $(TEST_LINK_FLAGS)
tests_unit_test_process_SOURCES = tests/unit/test_process.c
tests_unit_test_process_CPPFLAGS = $(UNIT_CPPFLAGS)
tests_unit_test_process_LDADD = $(UNIT_LDADD) -lpthread
tests_unit_test_process_LDFLAGS = $(TEST_LINK_FLAGS)
TESTS += tests/unit/test_dlopen tests/unit/test_process

# fork after dlclose, from threads, from a call_rcu callback (the test's own liburcu-bp).
check_PROGRAMS += tests/unit/test_fork
tests_unit_test_fork_SOURCES = tests/unit/test_fork.c tests/unit/dl_util.h
tests_unit_test_fork_CPPFLAGS = $(UNIT_CPPFLAGS) $(URCU_CFLAGS)
tests_unit_test_fork_LDADD = $(UNIT_LDADD) $(URCU_LIBS) $(DL_LIBS) -lpthread
tests_unit_test_fork_LDFLAGS = $(TEST_LINK_FLAGS)
TESTS += tests/unit/test_fork
endif

if ENABLE_UNIT
check_PROGRAMS += tests/unit/test_procfs
tests_unit_test_procfs_SOURCES = tests/unit/test_procfs.cpp
tests_unit_test_procfs_CPPFLAGS = $(UNIT_CPPFLAGS)
tests_unit_test_procfs_LDADD = lib/libprocfs.la $(CMOCKA_LIBS)
TESTS += tests/unit/test_procfs
endif

if ENABLE_UNIT
check_PROGRAMS += tests/unit/test_stack_attr
tests_unit_test_stack_attr_SOURCES = tests/unit/test_stack_attr.c
tests_unit_test_stack_attr_CPPFLAGS = $(UNIT_CPPFLAGS)
tests_unit_test_stack_attr_LDADD = $(UNIT_LDADD) -lpthread
tests_unit_test_stack_attr_LDFLAGS = $(TEST_LINK_FLAGS)
TESTS += tests/unit/test_stack_attr

check_PROGRAMS += tests/unit/test_callers_bound
tests_unit_test_callers_bound_SOURCES = tests/unit/test_callers_bound.c
tests_unit_test_callers_bound_CPPFLAGS = $(UNIT_CPPFLAGS)
tests_unit_test_callers_bound_LDADD = $(UNIT_LDADD) -lpthread
tests_unit_test_callers_bound_LDFLAGS = $(TEST_LINK_FLAGS)
TESTS += tests/unit/test_callers_bound
endif

if ENABLE_UNIT
# A callback library for ALLOCINFO_CALLBACKS; like the plugin, not linked with the
# library; like the examples, never instrumented.
check_LTLIBRARIES += tests/unit/libcblib.la
tests_unit_libcblib_la_SOURCES = tests/unit/cblib.c
tests_unit_libcblib_la_CFLAGS = -std=gnu11 $(WARN_CFLAGS) -g
tests_unit_libcblib_la_LDFLAGS = -rpath /nowhere -avoid-version -module
AM_TESTS_ENVIRONMENT += CBLIB='$(abs_top_builddir)/tests/unit/.libs/libcblib.so'; export CBLIB;

check_PROGRAMS += tests/unit/test_callbacks
tests_unit_test_callbacks_SOURCES = tests/unit/test_callbacks.c
tests_unit_test_callbacks_CPPFLAGS = $(UNIT_CPPFLAGS)
tests_unit_test_callbacks_LDADD = tests/unit/libplain.la $(UNIT_LDADD) $(DL_LIBS) -lpthread
tests_unit_test_callbacks_LDFLAGS = $(TEST_LINK_FLAGS)
TESTS += tests/unit/test_callbacks
endif

if ENABLE_UNIT
check_PROGRAMS += tests/unit/test_callbacks_cxx
tests_unit_test_callbacks_cxx_SOURCES = tests/unit/test_callbacks_cxx.cpp
tests_unit_test_callbacks_cxx_CPPFLAGS = $(UNIT_CPPFLAGS)
tests_unit_test_callbacks_cxx_CXXFLAGS = $(AM_CXXFLAGS) -g -O1
tests_unit_test_callbacks_cxx_LDADD = $(UNIT_LDADD) $(DL_LIBS)
tests_unit_test_callbacks_cxx_LDFLAGS = $(TEST_LINK_FLAGS)
TESTS += tests/unit/test_callbacks_cxx
endif

if ENABLE_UNIT
# The runtime's bare C++ names and hash map, compiled into the test alone.
check_PROGRAMS += tests/unit/test_bare_name
tests_unit_test_bare_name_SOURCES = tests/unit/test_bare_name.cpp lib/runtime/bare_name.cpp
tests_unit_test_bare_name_CPPFLAGS = $(UNIT_CPPFLAGS)
tests_unit_test_bare_name_LDADD = $(CMOCKA_LIBS)
TESTS += tests/unit/test_bare_name

# The set of page starts over another allocator, and each thread's memory of an absent
# one, compiled into the test alone.
check_PROGRAMS += tests/unit/test_page_starts
tests_unit_test_page_starts_SOURCES = tests/unit/test_page_starts.cpp \
	lib/runtime/page_starts.cpp lib/runtime/futex_lock.cpp
tests_unit_test_page_starts_CPPFLAGS = $(UNIT_CPPFLAGS)
tests_unit_test_page_starts_LDADD = $(CMOCKA_LIBS) -lpthread
TESTS += tests/unit/test_page_starts

# The library's once, compiled into the test alone.
check_PROGRAMS += tests/unit/test_once_flag
tests_unit_test_once_flag_SOURCES = tests/unit/test_once_flag.cpp lib/runtime/once_flag.cpp \
	lib/runtime/futex_lock.cpp
tests_unit_test_once_flag_CPPFLAGS = $(UNIT_CPPFLAGS)
tests_unit_test_once_flag_LDADD = $(CMOCKA_LIBS) -lpthread
TESTS += tests/unit/test_once_flag

# The stack walk from .eh_frame, against libgcc's unwinder (linked here for that).
check_PROGRAMS += tests/unit/test_cfi_unwind
tests_unit_test_cfi_unwind_SOURCES = tests/unit/test_cfi_unwind.cpp lib/runtime/cfi_unwind.cpp
tests_unit_test_cfi_unwind_CPPFLAGS = $(UNIT_CPPFLAGS)
tests_unit_test_cfi_unwind_LDADD = $(CMOCKA_LIBS) -lgcc_s -lpthread
TESTS += tests/unit/test_cfi_unwind
endif

if ENABLE_UNIT
# The sampling profiler's hooks. Frame pointers for ALLOCINFO_PROFILE_UNWIND=fp, and
# -rdynamic so that dladdr() names the functions a sampled stack passes through.
check_PROGRAMS += tests/unit/test_profiler
tests_unit_test_profiler_SOURCES = tests/unit/test_profiler.c
tests_unit_test_profiler_CPPFLAGS = $(UNIT_CPPFLAGS)
tests_unit_test_profiler_CFLAGS = $(AM_CFLAGS) -g -O1 -fno-omit-frame-pointer
tests_unit_test_profiler_LDADD = $(UNIT_LDADD) $(DL_LIBS) -lpthread -lm
tests_unit_test_profiler_LDFLAGS = $(TEST_LINK_FLAGS) -rdynamic
TESTS += tests/unit/test_profiler
endif

if ENABLE_UNIT
check_PROGRAMS += tests/unit/test_profiler_cxx
tests_unit_test_profiler_cxx_SOURCES = tests/unit/test_profiler_cxx.cpp
tests_unit_test_profiler_cxx_CPPFLAGS = $(UNIT_CPPFLAGS)
tests_unit_test_profiler_cxx_CXXFLAGS = $(AM_CXXFLAGS) -g -O1
tests_unit_test_profiler_cxx_LDADD = $(UNIT_LDADD) $(DL_LIBS)
tests_unit_test_profiler_cxx_LDFLAGS = $(TEST_LINK_FLAGS) -rdynamic
TESTS += tests/unit/test_profiler_cxx
endif

if ENABLE_UNIT
# Preloaded by test_startup_libc: counts liballocinfo's calls to printf and strto*.
check_LTLIBRARIES += tests/unit/liblibctrap.la
tests_unit_liblibctrap_la_SOURCES = tests/unit/libc_trap.c
tests_unit_liblibctrap_la_CFLAGS = -std=gnu11 $(WARN_CFLAGS) -g -U_FORTIFY_SOURCE
tests_unit_liblibctrap_la_LDFLAGS = -rpath /nowhere -avoid-version -module
tests_unit_liblibctrap_la_LIBADD = $(DL_LIBS)
AM_TESTS_ENVIRONMENT += LIBC_TRAP='$(abs_top_builddir)/tests/unit/.libs/liblibctrap.so'; export LIBC_TRAP;

check_PROGRAMS += tests/unit/test_startup_libc
tests_unit_test_startup_libc_SOURCES = tests/unit/test_startup_libc.c
tests_unit_test_startup_libc_CPPFLAGS = $(UNIT_CPPFLAGS)
tests_unit_test_startup_libc_LDADD = tests/unit/libplain.la $(UNIT_LDADD) $(DL_LIBS)
tests_unit_test_startup_libc_LDFLAGS = $(TEST_LINK_FLAGS)
TESTS += tests/unit/test_startup_libc
endif
