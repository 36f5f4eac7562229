# SPDX-License-Identifier: MIT
# Benchmarks: `make bench` builds the programs below (never built or run by `make
# check`) and runs tests/benchmark/bench.sh, which prints one table of ratios.
#
# Each workload is built twice from one source: *_tagged includes allocinfo.h and
# links the library; *_plain is built with -DALLOCINFO_DISABLE and no library (the
# baseline). -no-install links the real binary, not a libtool wrapper script, so
# valgrind and heaptrack measure the program itself.

BENCH_PROGS = \
	tests/benchmark/pairs_tagged tests/benchmark/pairs_plain \
	tests/benchmark/ctree_tagged tests/benchmark/ctree_plain \
	tests/benchmark/cxx_tagged tests/benchmark/cxx_plain \
	tests/benchmark/prodcons_tagged tests/benchmark/prodcons_plain \
	tests/benchmark/memory_tagged tests/benchmark/memory_plain \
	tests/benchmark/interp_tagged tests/benchmark/interp_plain \
	tests/benchmark/phase_tagged tests/benchmark/phase_plain \
	tests/benchmark/wrapped_tagged tests/benchmark/wrapped_plain \
	tests/benchmark/report_10 tests/benchmark/report_100 \
	tests/benchmark/report_1000 tests/benchmark/report_10000 \
	tests/benchmark/report_10000_plain tests/benchmark/spawn
BENCH_SITES = \
	tests/benchmark/sites_10.c tests/benchmark/sites_100.c \
	tests/benchmark/sites_1000.c tests/benchmark/sites_10000.c
EXTRA_PROGRAMS += $(BENCH_PROGS)

# Reference columns, preloaded under the baselines, counting nothing: the record alone
# (16 bytes in front of each block), and an 8-byte trailer at its end instead.
EXTRA_LTLIBRARIES = tests/benchmark/librecordonly.la tests/benchmark/libtraileronly.la \
	tests/benchmark/libcallbacksempty.la
tests_benchmark_librecordonly_la_SOURCES = tests/benchmark/record_only.c \
	tests/benchmark/shim.h tests/benchmark/shim_derived.h
tests_benchmark_librecordonly_la_LDFLAGS = -module -avoid-version -rpath /nowhere
tests_benchmark_libtraileronly_la_SOURCES = tests/benchmark/trailer_only.c \
	tests/benchmark/shim.h tests/benchmark/shim_derived.h
tests_benchmark_libtraileronly_la_LDFLAGS = -module -avoid-version -rpath /nowhere
# Empty user callbacks (ALLOCINFO_CALLBACKS), one pair or a chain: their cost alone.
tests_benchmark_libcallbacksempty_la_SOURCES = tests/benchmark/callbacks_empty.c
tests_benchmark_libcallbacksempty_la_LDFLAGS = -module -avoid-version -rpath /nowhere

BENCH_LIBS = lib/liballocinfo.la -lpthread
BENCH_LINK = -no-install
BENCH_PLAIN_CPP = $(AM_CPPFLAGS) -DALLOCINFO_DISABLE

tests_benchmark_pairs_tagged_SOURCES = tests/benchmark/pairs.c tests/benchmark/bench.h
tests_benchmark_pairs_tagged_CPPFLAGS = $(AM_CPPFLAGS)
tests_benchmark_pairs_tagged_LDADD = $(BENCH_LIBS)
tests_benchmark_pairs_tagged_LDFLAGS = $(BENCH_LINK)
tests_benchmark_pairs_plain_SOURCES = tests/benchmark/pairs.c tests/benchmark/bench.h
tests_benchmark_pairs_plain_CPPFLAGS = $(BENCH_PLAIN_CPP)
tests_benchmark_pairs_plain_LDADD = -lpthread

tests_benchmark_ctree_tagged_SOURCES = tests/benchmark/ctree.c tests/benchmark/bench.h
tests_benchmark_ctree_tagged_CPPFLAGS = $(AM_CPPFLAGS)
tests_benchmark_ctree_tagged_LDADD = $(BENCH_LIBS)
tests_benchmark_ctree_tagged_LDFLAGS = $(BENCH_LINK)
tests_benchmark_ctree_plain_SOURCES = tests/benchmark/ctree.c tests/benchmark/bench.h
tests_benchmark_ctree_plain_CPPFLAGS = $(BENCH_PLAIN_CPP)

tests_benchmark_cxx_tagged_SOURCES = tests/benchmark/cxx.cpp tests/benchmark/bench.h
tests_benchmark_cxx_tagged_CPPFLAGS = $(AM_CPPFLAGS)
tests_benchmark_cxx_tagged_LDADD = $(BENCH_LIBS)
tests_benchmark_cxx_tagged_LDFLAGS = $(BENCH_LINK)
tests_benchmark_cxx_plain_SOURCES = tests/benchmark/cxx.cpp tests/benchmark/bench.h
tests_benchmark_cxx_plain_CPPFLAGS = $(BENCH_PLAIN_CPP)

tests_benchmark_prodcons_tagged_SOURCES = tests/benchmark/prodcons.c tests/benchmark/bench.h
tests_benchmark_prodcons_tagged_CPPFLAGS = $(AM_CPPFLAGS)
tests_benchmark_prodcons_tagged_LDADD = $(BENCH_LIBS)
tests_benchmark_prodcons_tagged_LDFLAGS = $(BENCH_LINK)
tests_benchmark_prodcons_plain_SOURCES = tests/benchmark/prodcons.c tests/benchmark/bench.h
tests_benchmark_prodcons_plain_CPPFLAGS = $(BENCH_PLAIN_CPP)
tests_benchmark_prodcons_plain_LDADD = -lpthread

tests_benchmark_memory_tagged_SOURCES = tests/benchmark/memory.c tests/benchmark/bench.h
tests_benchmark_memory_tagged_CPPFLAGS = $(AM_CPPFLAGS)
tests_benchmark_memory_tagged_LDADD = $(BENCH_LIBS)
tests_benchmark_memory_tagged_LDFLAGS = $(BENCH_LINK)
tests_benchmark_memory_plain_SOURCES = tests/benchmark/memory.c tests/benchmark/bench.h
tests_benchmark_memory_plain_CPPFLAGS = $(BENCH_PLAIN_CPP)

tests_benchmark_interp_tagged_SOURCES = tests/benchmark/interp.c tests/benchmark/bench.h
tests_benchmark_interp_tagged_CPPFLAGS = $(AM_CPPFLAGS)
tests_benchmark_interp_tagged_LDADD = $(BENCH_LIBS)
tests_benchmark_interp_tagged_LDFLAGS = $(BENCH_LINK)
tests_benchmark_interp_plain_SOURCES = tests/benchmark/interp.c tests/benchmark/bench.h
tests_benchmark_interp_plain_CPPFLAGS = $(BENCH_PLAIN_CPP)

tests_benchmark_phase_tagged_SOURCES = tests/benchmark/phase.c tests/benchmark/bench.h tests/proc_status.h
tests_benchmark_phase_tagged_CPPFLAGS = $(AM_CPPFLAGS)
tests_benchmark_phase_tagged_LDADD = $(BENCH_LIBS)
tests_benchmark_phase_tagged_LDFLAGS = $(BENCH_LINK)
tests_benchmark_phase_plain_SOURCES = tests/benchmark/phase.c tests/benchmark/bench.h tests/proc_status.h
tests_benchmark_phase_plain_CPPFLAGS = $(BENCH_PLAIN_CPP)
tests_benchmark_wrapped_tagged_SOURCES = tests/benchmark/wrapped.c tests/benchmark/bench.h
tests_benchmark_wrapped_tagged_CPPFLAGS = $(AM_CPPFLAGS)
tests_benchmark_wrapped_tagged_LDADD = $(BENCH_LIBS)
tests_benchmark_wrapped_tagged_LDFLAGS = $(BENCH_LINK)
tests_benchmark_wrapped_plain_SOURCES = tests/benchmark/wrapped.c tests/benchmark/bench.h
tests_benchmark_wrapped_plain_CPPFLAGS = $(BENCH_PLAIN_CPP)

# The report's cost against its number of tags: one program per size, its call
# sites generated.
BENCH_REPORT_SRC = tests/benchmark/report.c tests/benchmark/bench.h
tests_benchmark_report_10_SOURCES = $(BENCH_REPORT_SRC)
nodist_tests_benchmark_report_10_SOURCES = tests/benchmark/sites_10.c
tests_benchmark_report_10_LDADD = $(BENCH_LIBS)
tests_benchmark_report_10_LDFLAGS = $(BENCH_LINK)
tests_benchmark_report_100_SOURCES = $(BENCH_REPORT_SRC)
nodist_tests_benchmark_report_100_SOURCES = tests/benchmark/sites_100.c
tests_benchmark_report_100_LDADD = $(BENCH_LIBS)
tests_benchmark_report_100_LDFLAGS = $(BENCH_LINK)
tests_benchmark_report_1000_SOURCES = $(BENCH_REPORT_SRC)
nodist_tests_benchmark_report_1000_SOURCES = tests/benchmark/sites_1000.c
tests_benchmark_report_1000_LDADD = $(BENCH_LIBS)
tests_benchmark_report_1000_LDFLAGS = $(BENCH_LINK)
tests_benchmark_report_10000_SOURCES = $(BENCH_REPORT_SRC)
nodist_tests_benchmark_report_10000_SOURCES = tests/benchmark/sites_10000.c
tests_benchmark_report_10000_LDADD = $(BENCH_LIBS)
tests_benchmark_report_10000_LDFLAGS = $(BENCH_LINK)

# The same without the library: the baseline of process_cost.sh's start-up row.
tests_benchmark_report_10000_plain_SOURCES = $(BENCH_REPORT_SRC)
nodist_tests_benchmark_report_10000_plain_SOURCES = tests/benchmark/sites_10000.c
tests_benchmark_report_10000_plain_CPPFLAGS = $(BENCH_PLAIN_CPP)

tests/benchmark/sites_%.c: $(top_srcdir)/tests/benchmark/gen-sites.sh
	$(AM_V_GEN)$(MKDIR_P) tests/benchmark && \
	$(SHELL) $(top_srcdir)/tests/benchmark/gen-sites.sh $* > $@.tmp && mv $@.tmp $@

# Process start and fork (process_cost.sh): a plain program; the library comes by
# LD_PRELOAD.
tests_benchmark_spawn_SOURCES = tests/benchmark/spawn.c

CLEANFILES += $(BENCH_PROGS) $(BENCH_SITES) $(EXTRA_LTLIBRARIES)
EXTRA_DIST += tests/benchmark/bench.sh tests/benchmark/gen-sites.sh \
	tests/benchmark/bench_underneath.sh tests/benchmark/process_cost.sh \
	tests/benchmark/compile-cost.sh

# BENCH_FLAGS passes options to bench.sh (e.g. BENCH_FLAGS=--quick).
bench: $(BENCH_PROGS) $(SAMPLER_BENCH_PROGS) $(EXTRA_LTLIBRARIES) lib/liballocinfo.la \
		tools/allocinfo-cc tools/allocinfo-c++
	@if test "x$(enable_sanitizer)" != xno; then \
		echo "bench: configure without --enable-sanitizer to measure"; exit 1; fi
	top_builddir='$(abs_top_builddir)' top_srcdir='$(abs_top_srcdir)' \
	$(SHELL) $(top_srcdir)/tests/benchmark/bench.sh $(BENCH_FLAGS)
	top_builddir='$(abs_top_builddir)' \
	$(SHELL) $(top_srcdir)/tests/benchmark/bench_underneath.sh $(BENCH_FLAGS)
	top_builddir='$(abs_top_builddir)' \
	$(SHELL) $(top_srcdir)/tests/benchmark/process_cost.sh $(BENCH_FLAGS)
	top_builddir='$(abs_top_builddir)' \
	$(SHELL) $(top_srcdir)/tests/benchmark/sampler_bench.sh $(BENCH_FLAGS)
	top_builddir='$(abs_top_builddir)' \
	$(SHELL) $(top_srcdir)/tests/benchmark/profile_bench.sh $(BENCH_FLAGS)
	@# what building through allocinfo-cc costs (compile time, code size)
	top_builddir='$(abs_top_builddir)' top_srcdir='$(abs_top_srcdir)' \
	bash $(top_srcdir)/tests/benchmark/compile-cost.sh $(BENCH_FLAGS)

# The sampling profiler (sampler_bench.sh): a no-op profiler loaded by
# ALLOCINFO_CALLBACKS, and one sampled allocation's cost with its stack.
SAMPLER_BENCH_PROGS = tests/benchmark/sampled_depth
EXTRA_PROGRAMS += $(SAMPLER_BENCH_PROGS)
EXTRA_LTLIBRARIES += tests/benchmark/libprofilernoop.la
tests_benchmark_libprofilernoop_la_SOURCES = tests/benchmark/profiler_noop.c
tests_benchmark_libprofilernoop_la_LDFLAGS = -module -avoid-version -rpath /nowhere
tests_benchmark_sampled_depth_SOURCES = tests/benchmark/sampled_depth.c tests/benchmark/bench.h
tests_benchmark_sampled_depth_CPPFLAGS = $(AM_CPPFLAGS)
tests_benchmark_sampled_depth_CFLAGS = $(AM_CFLAGS) -fno-omit-frame-pointer
tests_benchmark_sampled_depth_LDADD = $(BENCH_LIBS)
tests_benchmark_sampled_depth_LDFLAGS = $(BENCH_LINK)
CLEANFILES += $(SAMPLER_BENCH_PROGS)
EXTRA_DIST += tests/benchmark/sampler_bench.sh tests/benchmark/profile_bench.sh \
	tests/benchmark/bench_lib.sh
