# SPDX-License-Identifier: MIT
# liballocinfo: what every instrumented process runs.

# The exported entry points and the lean path over another allocator (which ends
# operator new's failures too); apart because operator new must be able to throw.
noinst_LTLIBRARIES += lib/liboverride.la
lib_liboverride_la_SOURCES = lib/runtime/override.cpp \
	lib/runtime/foreign_path.h lib/runtime/foreign_path.cpp
lib_liboverride_la_CXXFLAGS = -std=gnu++17 $(WARN_CXXFLAGS) -fvisibility=hidden \
	-ftls-model=initial-exec $(SAN_FRAME_FLAGS) $(COMMON_TEXT_CXXFLAGS)

lib_LTLIBRARIES += lib/liballocinfo.la
lib_liballocinfo_la_LIBTOOLFLAGS =	# both libraries (Makefile.am)
lib_liballocinfo_la_SOURCES = \
	lib/runtime/internal.h \
	lib/runtime/options.h lib/runtime/options.cpp \
	lib/runtime/log.cpp \
	lib/runtime/backend.h lib/runtime/backend.cpp \
	lib/runtime/route.h lib/runtime/route.cpp \
	lib/runtime/allocator_api.h lib/runtime/allocator_api.cpp \
	lib/runtime/thread_shard.h lib/runtime/thread_shard.cpp \
	lib/runtime/cpu_shard.h lib/runtime/cpu_shard.cpp \
	lib/store/store.h lib/store/store.cpp \
	lib/store/store_file.h lib/store/store_file.cpp \
	lib/runtime/plain_vector.h lib/runtime/plain_map.h \
	lib/runtime/registry.h lib/runtime/registry.cpp \
	lib/runtime/caller_tags.h lib/runtime/caller_tags.cpp \
	lib/runtime/bare_name.h lib/runtime/bare_name.cpp \
	lib/runtime/wrappers.h lib/runtime/wrappers.cpp \
	lib/runtime/frames.h lib/runtime/frames.cpp \
	lib/runtime/sanitizer_frames.h lib/runtime/sanitizer_frames.cpp \
	lib/runtime/sanitizer_double_free.h lib/runtime/sanitizer_double_free.cpp \
	lib/runtime/cfi_unwind.h lib/runtime/cfi_unwind.cpp \
	lib/runtime/table_pages.h lib/runtime/table_pages.cpp \
	lib/runtime/read_self.h lib/runtime/pointer_info.cpp \
	lib/runtime/allocators.h lib/runtime/allocators.cpp \
	lib/runtime/suballoc.h lib/runtime/suballoc.cpp \
	lib/runtime/bound_at_load.h \
	lib/runtime/futex_lock.h lib/runtime/futex_lock.cpp \
	lib/runtime/once_flag.h lib/runtime/once_flag.cpp \
	lib/runtime/page_starts.h lib/runtime/page_starts.cpp \
	lib/runtime/small_heap.h lib/runtime/small_heap.cpp \
	lib/runtime/introspection.h lib/runtime/introspection.cpp \
	lib/runtime/alloc.h lib/runtime/alloc.cpp \
	lib/runtime/rcu_published.h lib/runtime/rcu_library.h lib/runtime/rcu_library.cpp \
	lib/runtime/callbacks.h lib/runtime/callbacks.cpp \
	lib/runtime/sampler.h lib/runtime/sampler.cpp \
	lib/runtime/stack_trace.h lib/runtime/stack_trace.cpp \
	lib/runtime/init.cpp \
	lib/runtime/api.cpp \
	lib/store/reader_module.h lib/store/bpf_module.h \
	lib/runtime/library_dlopen.h lib/runtime/library_dlopen.cpp \
	lib/runtime/next_definition.h lib/runtime/daemon_start.cpp \
	lib/runtime/stack_attr.h lib/runtime/stack_attr.cpp \
	lib/runtime/reader_loader.h lib/runtime/reader_loader.cpp \
	lib/runtime/pprof_profiler.h lib/runtime/pprof_profiler.cpp
lib_liballocinfo_la_CPPFLAGS = $(AM_CPPFLAGS) \
	-DALLOCINFO_READER_PATH='"$(pkglibdir)/liballocinfo-reader.so"' \
	-DALLOCINFO_BUILD_READER_PATH='"$(abs_top_builddir)/lib/.libs/liballocinfo-reader.so"' \
	-DALLOCINFO_BPF_MODULE_PATH='"$(pkglibdir)/liballocinfo-bpf.so"' \
	-DALLOCINFO_BUILD_BPF_MODULE_PATH='"$(abs_top_builddir)/lib/.libs/liballocinfo-bpf.so"' \
	-DALLOCINFO_BUILD_LIB_DIR='"$(abs_top_builddir)/lib/.libs"'
lib_liballocinfo_la_CXXFLAGS = $(CORE_CXXFLAGS) -ftls-model=initial-exec \
	$(COMMON_TEXT_CXXFLAGS)
lib_liballocinfo_la_LIBADD = lib/liboverride.la lib/libprocfs.la $(DL_LIBS) -lpthread
# --as-needed: the C++ compiler driver adds libstdc++, which nothing here uses.
# -z now: no lazy binding inside malloc, whose resolver saves the whole vector
# register state on the stack of a thread that may be PTHREAD_STACK_MIN bytes
# (and the relocations become read-only).
lib_liballocinfo_la_LDFLAGS = -version-info 0:0:0 -Wl,--as-needed -Wl,-z,now \
	-Wl,--version-script=$(top_srcdir)/lib/runtime/liballocinfo.sym -Wl,-z,nodelete \
	$(RELR_LDFLAGS) $(COMMON_TEXT_LDFLAGS)
EXTRA_lib_liballocinfo_la_DEPENDENCIES = $(top_srcdir)/lib/runtime/liballocinfo.sym \
	$(top_srcdir)/lib/runtime/common-text.ld
EXTRA_DIST += lib/runtime/common-text.ld

# The functions instrumented processes run, first in the library's code, each in a
# section of its own so that the script can pick them (configure.ac, COMMON_TEXT).
if COMMON_TEXT
COMMON_TEXT_CXXFLAGS = -ffunction-sections
COMMON_TEXT_LDFLAGS = -Wl,-T,$(top_srcdir)/lib/runtime/common-text.ld
endif

# What a process loads only when it needs it (lib/store/reader_module.h): its own
# report, a BPF store's tag names and iterator. Installed in $(pkglibdir), found by
# liballocinfo at that absolute path (or in the build tree, for the tests).
pkglib_LTLIBRARIES = lib/liballocinfo-reader.la
lib_liballocinfo_reader_la_SOURCES = lib/store/reader_module.h lib/reader/reader_module.cpp
lib_liballocinfo_reader_la_CXXFLAGS = $(LIB_CXXFLAGS) $(LIBDW_CFLAGS)
lib_liballocinfo_reader_la_LIBADD = lib/libreader.la -lpthread
lib_liballocinfo_reader_la_LDFLAGS = -module -avoid-version -shared -Wl,-z,nodelete \
	-Wl,--version-script=$(top_srcdir)/lib/reader/reader_module.sym
EXTRA_lib_liballocinfo_reader_la_DEPENDENCIES = $(top_srcdir)/lib/reader/reader_module.sym
EXTRA_DIST += lib/runtime/liballocinfo.sym lib/reader/reader_module.sym lib/runtime/local.mk lib/store/local.mk \
	lib/reader/local.mk
