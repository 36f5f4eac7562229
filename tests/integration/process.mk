# SPDX-License-Identifier: MIT
# Tests of the library inside other people's processes: setuid programs, store life,
# file descriptors, fork. The ones that need root or a user nobody skip (77) without.

# -no-install: the tests copy the real binary (a setuid copy among them).
check_PROGRAMS += tests/integration/process_prog
tests_integration_process_prog_SOURCES = tests/integration/process_prog.c
tests_integration_process_prog_CFLAGS = $(AM_CFLAGS) -g -O1
tests_integration_process_prog_LDADD = $(TEST_LDADD)
tests_integration_process_prog_LDFLAGS = $(TEST_LINK_FLAGS) -no-install
# An LD_AUDIT module that stalls the loader while it maps a chosen object, so that
# process_fork_load.sh meets its race every time.
check_LTLIBRARIES += tests/integration/libloaderpause.la
tests_integration_libloaderpause_la_SOURCES = tests/integration/loader_pause.c
tests_integration_libloaderpause_la_CFLAGS = $(AM_CFLAGS) -g -O1
tests_integration_libloaderpause_la_LDFLAGS = -rpath /nowhere -avoid-version -module

PROCESS_TESTS = \
	tests/integration/process_secure.sh \
	tests/integration/process_life.sh \
	tests/integration/process_fds.sh \
	tests/integration/process_bpfdir.sh \
	tests/integration/process_lean.sh \
	tests/integration/process_fork_lazy.sh \
	tests/integration/process_fork_load.sh \
	tests/integration/process_stack.sh
TESTS += $(PROCESS_TESTS)
EXTRA_DIST += $(PROCESS_TESTS) tests/integration/process_lib.sh

# process_bpfdir.sh makes the machine's pin directory 1777 for a moment: the other
# tests that make BPF stores must not run meanwhile (their processes would say so).
tests/integration/process_bpfdir.log: $(BPF_TESTS:.sh=.log) \
	tests/integration/process_life.log tests/integration/process_fds.log \
	tests/integration/process_fork_lazy.log tests/integration/process_fork_load.log
