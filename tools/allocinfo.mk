# SPDX-License-Identifier: MIT
# The allocinfo tool: reads the stores of live processes, without the daemon.

# Store discovery, shared with allocinfod.
lib_libreader_la_SOURCES += lib/reader/store_scan.h lib/reader/store_scan.cpp

bin_PROGRAMS += tools/allocinfo
tools_allocinfo_SOURCES = \
	tools/allocinfo.cpp \
	tools/allocinfo_snapshot.h tools/allocinfo_snapshot.cpp
tools_allocinfo_LDADD = lib/libreader.la

dist_man_MANS += Documentation/man/allocinfo.1
EXTRA_DIST += Documentation/reading-the-report.md
