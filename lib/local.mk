# SPDX-License-Identifier: MIT
# liballocinfo, and libreader: the store parser and renderers shared with the tools.

include_HEADERS += include/allocinfo.h

LIB_CXXFLAGS = $(AM_CXXFLAGS) -fvisibility=hidden -fno-rtti -fno-exceptions \
	-fno-omit-frame-pointer
# The allocation path runs inside the sanitizers' own start-up (their dlsym calls
# malloc before their shadow memory exists), so it is never instrumented: the
# sanitizer builds check it through the tests and the sanitizer's allocator beneath.
CORE_CXXFLAGS = -std=gnu++17 $(WARN_CXXFLAGS) -fvisibility=hidden -fno-rtti \
	-fno-exceptions

# Reading stores and rendering reports: used in-process and by the tools.
noinst_LTLIBRARIES += lib/libreader.la
lib_libreader_la_SOURCES = \
	lib/store_format.h \
	lib/store_reader.h lib/store_reader.cpp \
	lib/site_table.h lib/site_table.cpp \
	lib/report.h lib/report.cpp lib/pprof.cpp \
	lib/saturating.h \
	lib/symbolize.h lib/symbolize.cpp \
	lib/cxxname.h lib/cxxname.cpp
lib_libreader_la_CXXFLAGS = $(LIB_CXXFLAGS) $(LIBDW_CFLAGS) $(ZLIB_CFLAGS)
lib_libreader_la_LIBADD = lib/libprocfs.la $(LIBDW_LIBS) $(ZLIB_LIBS)

# /proc and /sys parsing: used by readers and by the library's start-up.
noinst_LTLIBRARIES += lib/libprocfs.la
lib_libprocfs_la_SOURCES = lib/procfs.h lib/procfs.cpp
lib_libprocfs_la_CXXFLAGS = $(CORE_CXXFLAGS)

# The exported entry points; apart because operator new must be able to throw.
noinst_LTLIBRARIES += lib/liboverride.la
lib_liboverride_la_SOURCES = lib/override.cpp
lib_liboverride_la_CXXFLAGS = -std=gnu++17 $(WARN_CXXFLAGS) -fvisibility=hidden \
	$(URCU_CFLAGS) -ftls-model=initial-exec

lib_LTLIBRARIES += lib/liballocinfo.la
lib_liballocinfo_la_SOURCES = \
	lib/internal.h \
	lib/options.h lib/options.cpp \
	lib/log.cpp \
	lib/backend.h lib/backend.cpp \
	lib/thread_shard.h lib/thread_shard.cpp \
	lib/cpu_shard.h lib/cpu_shard.cpp \
	lib/store.h lib/store.cpp \
	lib/registry.h lib/registry.cpp \
	lib/caller_tags.h lib/caller_tags.cpp \
	lib/small_heap.h lib/small_heap.cpp \
	lib/alloc.h lib/alloc.cpp \
	lib/init.cpp \
	lib/api.cpp
lib_liballocinfo_la_CXXFLAGS = $(CORE_CXXFLAGS) $(URCU_CFLAGS) -ftls-model=initial-exec
lib_liballocinfo_la_LIBADD = lib/liboverride.la lib/libreader.la $(URCU_LIBS) $(DL_LIBS) -lpthread
lib_liballocinfo_la_LDFLAGS = -version-info 0:0:0 \
	-Wl,--version-script=$(top_srcdir)/lib/liballocinfo.sym -Wl,-z,nodelete
EXTRA_lib_liballocinfo_la_DEPENDENCIES = $(top_srcdir)/lib/liballocinfo.sym
EXTRA_DIST += lib/liballocinfo.sym
