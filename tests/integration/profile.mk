# SPDX-License-Identifier: MIT
# The built-in pprof heap profiler (ALLOCINFO_PROFILE, allocinfo_pprof_profiler_start)
# on a workload of known allocations, read back with `go tool pprof` (the tests that
# need it skip, 77, without it), and `allocinfo --pprof --profile`.

check_PROGRAMS += tests/integration/profile_prog tests/integration/profile_prog_plain
tests_integration_profile_prog_SOURCES = tests/integration/profile_prog.c
tests_integration_profile_prog_CFLAGS = $(AM_CFLAGS) -g -O1 -fno-omit-frame-pointer
tests_integration_profile_prog_LDADD = $(TEST_LDADD) $(DL_LIBS) -lpthread
tests_integration_profile_prog_LDFLAGS = $(TEST_LINK_FLAGS) -no-install
tests_integration_profile_prog_plain_SOURCES = tests/integration/profile_prog.c
tests_integration_profile_prog_plain_CPPFLAGS = $(AM_CPPFLAGS) -DPLAIN_BUILD
tests_integration_profile_prog_plain_CFLAGS = $(AM_CFLAGS) -g -O1 -fno-omit-frame-pointer
tests_integration_profile_prog_plain_LDADD = $(DL_LIBS) -lpthread

PROFILE_TESTS = \
	tests/integration/profile_pprof.sh \
	tests/integration/profile_triggers.sh \
	tests/integration/profile_env.sh \
	tests/integration/profile_merge.sh
TESTS += $(PROFILE_TESTS)
EXTRA_DIST += $(PROFILE_TESTS) tests/integration/profile_lib.sh \
	tests/integration/profile_lsan.supp
