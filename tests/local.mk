# SPDX-License-Identifier: MIT
# Tests: unit/ (CMocka, in `make check`), integration/ (real processes, in `make
# check`), regression/ (long torture runs: `make regtest`), benchmark/ (`make bench`).
#
# Every test runs through tests/run-test.sh (a private ALLOCINFO_STORE_DIR) with:
#   top_srcdir, top_builddir   absolute paths
#   ALLOCINFO_LIB              the built liballocinfo.so
#   PATH                       starts with the built tools
# Exit status: 0 pass, 77 skip, anything else fails.

AM_TESTS_ENVIRONMENT = \
	top_srcdir='$(abs_top_srcdir)'; export top_srcdir; \
	top_builddir='$(abs_top_builddir)'; export top_builddir; \
	ALLOCINFO_LIB='$(abs_top_builddir)/lib/.libs/liballocinfo.so'; export ALLOCINFO_LIB; \
	PATH='$(abs_top_builddir)/tools:$(abs_top_builddir)/tools/.libs:'"$$PATH"; export PATH; \
	ALLOCINFO_SANITIZER='$(enable_sanitizer)'; export ALLOCINFO_SANITIZER; \
	ALLOCINFO_COMMON_TEXT='$(common_text)'; export ALLOCINFO_COMMON_TEXT; \
	TSAN_OPTIONS="suppressions=$(abs_top_srcdir)/tests/tsan.supp $$TSAN_OPTIONS"; \
	export TSAN_OPTIONS;

LOG_COMPILER = $(top_srcdir)/tests/run-test.sh
SH_LOG_COMPILER = $(top_srcdir)/tests/run-test.sh
TEST_EXTENSIONS = .sh
EXTRA_DIST += tests/run-test.sh tests/tsan.supp

# Test programs link the library; under a sanitizer, statically, so it comes first.
# -no-install: the real binary, not a libtool wrapper script that runs bash before
# every start of the program.
TEST_LDADD = lib/liballocinfo.la $(SAN_TEST_LIBS)
TEST_LINK_FLAGS = $(SAN_TEST_LDFLAGS) -no-install

# Reruns the whole suite until the first failure: the tool for flaky concurrency bugs.
check-loop:
	n=0; while $(MAKE) $(AM_MAKEFLAGS) check >/dev/null 2>&1; do \
		n=$$((n + 1)); echo "check-loop: pass $$n"; done; \
	echo "check-loop: failed after $$n passes; see test-suite.log"; exit 1
