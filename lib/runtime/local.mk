# SPDX-License-Identifier: MIT
# liballocinfo: what every instrumented process runs.

# The exported entry points; apart because operator new must be able to throw.
noinst_LTLIBRARIES += lib/liboverride.la
lib_liboverride_la_SOURCES = lib/runtime/override.cpp
lib_liboverride_la_CXXFLAGS = -std=gnu++17 $(WARN_CXXFLAGS) -fvisibility=hidden \
	$(URCU_CFLAGS) -ftls-model=initial-exec

lib_LTLIBRARIES += lib/liballocinfo.la
lib_liballocinfo_la_SOURCES = \
	lib/runtime/internal.h \
	lib/runtime/options.h lib/runtime/options.cpp \
	lib/runtime/log.cpp \
	lib/runtime/backend.h lib/runtime/backend.cpp \
	lib/runtime/thread_shard.h lib/runtime/thread_shard.cpp \
	lib/runtime/cpu_shard.h lib/runtime/cpu_shard.cpp \
	lib/store/store.h lib/store/store.cpp \
	lib/runtime/registry.h lib/runtime/registry.cpp \
	lib/runtime/caller_tags.h lib/runtime/caller_tags.cpp \
	lib/runtime/wrappers.h lib/runtime/wrappers.cpp \
	lib/runtime/frames.h lib/runtime/frames.cpp \
	lib/runtime/pointer_info.cpp \
	lib/runtime/allocators.h lib/runtime/allocators.cpp \
	lib/runtime/small_heap.h lib/runtime/small_heap.cpp \
	lib/runtime/alloc.h lib/runtime/alloc.cpp \
	lib/runtime/init.cpp \
	lib/runtime/api.cpp
lib_liballocinfo_la_CXXFLAGS = $(CORE_CXXFLAGS) $(URCU_CFLAGS) -ftls-model=initial-exec
lib_liballocinfo_la_LIBADD = lib/liboverride.la lib/libreader.la $(URCU_LIBS) $(DL_LIBS) -lpthread
lib_liballocinfo_la_LDFLAGS = -version-info 0:0:0 \
	-Wl,--version-script=$(top_srcdir)/lib/runtime/liballocinfo.sym -Wl,-z,nodelete
EXTRA_lib_liballocinfo_la_DEPENDENCIES = $(top_srcdir)/lib/runtime/liballocinfo.sym
EXTRA_DIST += lib/runtime/liballocinfo.sym lib/runtime/local.mk lib/store/local.mk \
	lib/reader/local.mk
