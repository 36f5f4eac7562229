# SPDX-License-Identifier: MIT
# libreader: reading stores and rendering reports, used in-process and by the tools.

noinst_LTLIBRARIES += lib/libreader.la
lib_libreader_la_SOURCES = \
	lib/store/store_format.h \
	lib/reader/store_reader.h lib/reader/store_reader.cpp lib/reader/tag_naming.cpp \
	lib/reader/site_table.h lib/reader/site_table.cpp \
	lib/reader/report.h lib/reader/report.cpp lib/reader/pprof.cpp \
	lib/reader/proto_write.h lib/reader/proto_write.cpp \
	lib/reader/heap_profile.h lib/reader/heap_profile.cpp \
	lib/reader/profile_read.h lib/reader/profile_read.cpp \
	lib/reader/saturating.h \
	lib/reader/safe_open.h lib/reader/safe_open.cpp \
	lib/reader/store_owner.h lib/reader/store_owner.cpp \
	lib/reader/symbolize.h lib/reader/symbolize.cpp \
	lib/reader/line_table.h lib/reader/line_table.cpp \
	lib/reader/cxxname.h lib/reader/cxxname.cpp \
	lib/store/block_find.h lib/reader/block_lookup.h lib/reader/block_lookup.cpp
lib_libreader_la_CXXFLAGS = $(LIB_CXXFLAGS) $(LIBDW_CFLAGS) $(ZLIB_CFLAGS)
lib_libreader_la_LIBADD = lib/libprocfs.la $(LIBDW_LIBS) $(ZLIB_LIBS)
