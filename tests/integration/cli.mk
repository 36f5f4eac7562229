# SPDX-License-Identifier: MIT
# Tests of the allocinfo tool against real instrumented processes, and of the store
# discovery it shares with allocinfod.

# The instrumented program the tests read, twice: same lines, two modules.
# -no-install: the test runs the real binary (its name is the module), not a wrapper.
check_PROGRAMS += tests/integration/cli_prog tests/integration/cli_other
tests_integration_cli_prog_SOURCES = tests/integration/cli_prog.c
tests_integration_cli_prog_LDADD = $(TEST_LDADD)
tests_integration_cli_prog_LDFLAGS = $(TEST_LINK_FLAGS) -no-install
tests_integration_cli_other_SOURCES = tests/integration/cli_prog.c
tests_integration_cli_other_CPPFLAGS = $(AM_CPPFLAGS) -DCLI_OTHER
tests_integration_cli_other_LDADD = $(TEST_LDADD)
tests_integration_cli_other_LDFLAGS = $(TEST_LINK_FLAGS) -no-install

# Writes synthetic stores, good and hostile, for the tests.
check_PROGRAMS += tests/integration/cli_forge
tests_integration_cli_forge_SOURCES = tests/integration/cli_forge.c lib/store/store_format.h

CLI_TESTS = \
	tests/integration/cli_report.sh \
	tests/integration/cli_formats.sh \
	tests/integration/cli_diff.sh \
	tests/integration/cli_switch.sh \
	tests/integration/cli_stale.sh \
	tests/integration/cli_hostile.sh \
	tests/integration/cli_usage.sh \
	tests/integration/cli_debuglink.sh \
	tests/integration/cli_budget.sh \
	tests/integration/cli_users.sh \
	tests/integration/cli_unreadable.sh \
	tests/integration/cli_files.sh \
	tests/integration/cli_bounds.sh
TESTS += $(CLI_TESTS)
EXTRA_DIST += $(CLI_TESTS) tests/integration/cli_lib.sh \
	tests/integration/nobody_lib.sh tests/integration/nobody_prog.c

# The store discovery's checks, against synthetic stores (CMocka).
if ENABLE_UNIT
check_PROGRAMS += tests/unit/test_store_scan
tests_unit_test_store_scan_SOURCES = tests/unit/test_store_scan.cpp
tests_unit_test_store_scan_CPPFLAGS = $(AM_CPPFLAGS) $(CMOCKA_CFLAGS)
tests_unit_test_store_scan_CXXFLAGS = $(AM_CXXFLAGS) -fno-exceptions -fno-rtti
tests_unit_test_store_scan_LDADD = lib/libreader.la $(CMOCKA_LIBS)
TESTS += tests/unit/test_store_scan
endif
