# SPDX-License-Identifier: MIT
# The fuzz target of the store parser and the renderers (tests/fuzz/fuzz_store.cpp).
#
#   make check        fuzz_replay runs the target over the seed corpus (and cuts and
#                     byte overwrites of it) without libFuzzer
#   make fuzz         builds it with clang's libFuzzer, ASan and UBSan and fuzzes for
#                     FUZZ_TIME seconds from the seed corpus; findings land in
#                     tests/fuzz/artifacts/ (never part of `make check`)
#   make fuzz-corpus  rewrites the seed corpus from gen_corpus.cpp

check_PROGRAMS += tests/fuzz/fuzz_replay
tests_fuzz_fuzz_replay_SOURCES = tests/fuzz/fuzz_store.cpp tests/fuzz/fuzz_replay.cpp
tests_fuzz_fuzz_replay_LDADD = lib/libreader.la
TESTS += tests/fuzz/fuzz_replay
EXTRA_DIST += tests/fuzz/corpus tests/fuzz/gen_corpus.cpp

FUZZ_CXX = clang++
FUZZ_TIME = 60
FUZZ_SANITIZE = fuzzer,address,undefined
FUZZ_FLAGS =
# The reader's sources, compiled with the fuzzer's coverage instrumentation.
FUZZ_READER = lib/reader/store_reader.cpp lib/reader/tag_naming.cpp \
	lib/reader/site_table.cpp lib/reader/report.cpp lib/reader/symbolize.cpp lib/reader/line_table.cpp \
	lib/reader/cxxname.cpp lib/reader/safe_open.cpp lib/reader/store_owner.cpp lib/store/procfs.cpp

tests/fuzz/fuzz_store: $(top_srcdir)/tests/fuzz/fuzz_store.cpp \
		$(addprefix $(top_srcdir)/,$(FUZZ_READER)) config.h
	$(AM_V_CXXLD)$(MKDIR_P) tests/fuzz && \
	$(FUZZ_CXX) -std=gnu++17 -g -O1 -fno-omit-frame-pointer -fsanitize=$(FUZZ_SANITIZE) \
		-fno-sanitize-recover=all $(AM_CPPFLAGS) $(LIBDW_CFLAGS) \
		$(top_srcdir)/tests/fuzz/fuzz_store.cpp \
		$(addprefix $(top_srcdir)/,$(FUZZ_READER)) -o $@ $(LIBDW_LIBS) $(ZLIB_LIBS)

fuzz: tests/fuzz/fuzz_store
	$(MKDIR_P) tests/fuzz/work tests/fuzz/artifacts
	tests/fuzz/fuzz_store -max_total_time=$(FUZZ_TIME) -timeout=10 -rss_limit_mb=2048 \
		-max_len=65536 -print_final_stats=1 -artifact_prefix=tests/fuzz/artifacts/ \
		$(FUZZ_FLAGS) tests/fuzz/work $(top_srcdir)/tests/fuzz/corpus

tests/fuzz/gen_corpus: $(top_srcdir)/tests/fuzz/gen_corpus.cpp $(top_srcdir)/lib/store/store_format.h
	$(AM_V_CXXLD)$(MKDIR_P) tests/fuzz && \
	$(CXX) -std=gnu++17 $(WARN_CXXFLAGS) $(AM_CPPFLAGS) $(CXXFLAGS) \
		$(top_srcdir)/tests/fuzz/gen_corpus.cpp -o $@

fuzz-corpus: tests/fuzz/gen_corpus
	tests/fuzz/gen_corpus $(top_srcdir)/tests/fuzz/corpus

CLEANFILES += tests/fuzz/fuzz_store tests/fuzz/gen_corpus
.PHONY: fuzz fuzz-corpus
