# SPDX-License-Identifier: MIT
# Integration tests of the library: real programs, LD_PRELOAD, header compatibility.

TESTS += tests/integration/header.sh
EXTRA_DIST += tests/integration/header.sh tests/integration/header_first.c \
	tests/integration/header_first.cpp tests/integration/header_later_gnu_source.c

# The same source with the library, and with -DALLOCINFO_DISABLE and no library.
check_PROGRAMS += tests/unit/disabled tests/unit/disabled_off
tests_unit_disabled_SOURCES = tests/unit/disabled.c
tests_unit_disabled_LDADD = $(TEST_LDADD) $(DL_LIBS)
tests_unit_disabled_LDFLAGS = $(TEST_LINK_FLAGS)
tests_unit_disabled_off_SOURCES = tests/unit/disabled.c
tests_unit_disabled_off_CPPFLAGS = $(AM_CPPFLAGS) -DALLOCINFO_DISABLE
tests_unit_disabled_off_LDADD = $(DL_LIBS)
TESTS += tests/unit/disabled tests/unit/disabled_off

check_PROGRAMS += tests/unit/preload_target
tests_unit_preload_target_SOURCES = tests/unit/preload_target.c
tests_unit_preload_target_CFLAGS = $(AM_CFLAGS) -g -O1
tests_unit_preload_target_LDADD = $(DL_LIBS)
TESTS += tests/integration/preload.sh
EXTRA_DIST += tests/integration/preload.sh

# One path style for both kinds of tag: a program built by the test, as a user would.
TESTS += tests/integration/report_paths.sh
EXTRA_DIST += tests/integration/report_paths.sh tests/integration/report_paths.cpp

# The README's and the user guide's report samples are what scripts/demo.sh prints.
TESTS += tests/integration/doc_samples.sh
EXTRA_DIST += tests/integration/doc_samples.sh

# The example callback libraries (Documentation/examples) on a real program, tagged
# and under LD_PRELOAD.
check_PROGRAMS += tests/integration/callbacks_prog tests/integration/callbacks_prog_plain
tests_integration_callbacks_prog_SOURCES = tests/integration/callbacks_prog.c
tests_integration_callbacks_prog_CFLAGS = $(AM_CFLAGS) -g
tests_integration_callbacks_prog_LDADD = $(TEST_LDADD) -lpthread
tests_integration_callbacks_prog_LDFLAGS = $(TEST_LINK_FLAGS) -no-install
tests_integration_callbacks_prog_plain_SOURCES = tests/integration/callbacks_prog.c
tests_integration_callbacks_prog_plain_CPPFLAGS = $(AM_CPPFLAGS) -DPLAIN_BUILD
tests_integration_callbacks_prog_plain_CFLAGS = $(AM_CFLAGS) -g
tests_integration_callbacks_prog_plain_LDADD = -lpthread
TESTS += tests/integration/callbacks.sh
EXTRA_DIST += tests/integration/callbacks.sh
