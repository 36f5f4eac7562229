# SPDX-License-Identifier: MIT
# allocinfod: the FUSE server of /run/allocinfo (needs libfuse3), its systemd unit and
# its read-latency benchmark.

if ENABLE_FUSE
sbin_PROGRAMS += tools/allocinfod
tools_allocinfod_SOURCES = \
	tools/allocinfod.cpp \
	tools/allocinfod_access.h tools/allocinfod_access.cpp \
	tools/allocinfod_fs.h tools/allocinfod_fs.cpp \
	tools/allocinfod_log.h tools/allocinfod_log.cpp \
	tools/allocinfod_metrics.h tools/allocinfod_metrics.cpp \
	tools/allocinfod_report.h tools/allocinfod_report.cpp
tools_allocinfod_CXXFLAGS = $(AM_CXXFLAGS) $(FUSE_CFLAGS)
tools_allocinfod_LDADD = lib/libreader.la $(FUSE_LIBS) -lpthread

# The unit is installed into $(systemdunitdir); `make install systemdunitdir=` skips it.
systemdunitdir = $(prefix)/lib/systemd/system
systemdunit_DATA = tools/allocinfod.service
endif

tools/allocinfod.service: $(top_srcdir)/tools/allocinfod.service.in Makefile
	$(AM_V_GEN)$(MKDIR_P) tools && \
	$(SED) -e 's|@sbindir[@]|$(sbindir)|g' $(top_srcdir)/tools/allocinfod.service.in > $@.tmp && \
	mv $@.tmp $@
CLEANFILES += tools/allocinfod.service
EXTRA_DIST += tools/allocinfod.service.in
dist_man_MANS += Documentation/man/allocinfod.8
EXTRA_DIST += Documentation/daemon.md

# Read latency of the daemon's file and of `allocinfo` (a benchmark, never in `make
# check`): 10 processes of 1,000 tags each. Plain rules rather than EXTRA_PROGRAMS,
# which tests/benchmark/local.mk sets.
tests/benchmark/read_latency: $(top_srcdir)/tests/benchmark/read_latency.c
	$(AM_V_CC)$(MKDIR_P) tests/benchmark && \
	$(CC) $(AM_CPPFLAGS) $(CPPFLAGS) -std=gnu11 $(WARN_CFLAGS) -O2 $(CFLAGS) $(LDFLAGS) \
		-o $@ $(top_srcdir)/tests/benchmark/read_latency.c
CLEANFILES += tests/benchmark/read_latency
EXTRA_DIST += tests/benchmark/read_latency.c

bench-read-latency: tests/benchmark/read_latency tests/benchmark/report_1000 all
	@if test "x$(enable_sanitizer)" != xno; then \
		echo "bench-read-latency: configure without --enable-sanitizer to measure"; exit 1; fi
	tests/benchmark/read_latency --holder tests/benchmark/report_1000 \
		--allocinfod tools/allocinfod --allocinfo tools/allocinfo $(READ_LATENCY_FLAGS)
.PHONY: bench-read-latency
