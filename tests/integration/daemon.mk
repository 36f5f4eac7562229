# SPDX-License-Identifier: MIT
# allocinfod against real processes: the combined and per-process files, kill -9 of
# a process and of the daemon, reads under load, Prometheus, hostile stores. Each
# test mounts on a private directory and skips (77) without root and /dev/fuse.

# Built twice: two programs with the same call sites in different modules.
# -no-install: the real binary, so that its module is "daemon_hold", not lt-...
check_PROGRAMS += tests/integration/daemon_hold tests/integration/daemon_hold_b
tests_integration_daemon_hold_SOURCES = tests/integration/daemon_hold.c
tests_integration_daemon_hold_LDADD = $(TEST_LDADD)
tests_integration_daemon_hold_LDFLAGS = $(TEST_LINK_FLAGS) -no-install
tests_integration_daemon_hold_b_SOURCES = tests/integration/daemon_hold.c
tests_integration_daemon_hold_b_LDADD = $(TEST_LDADD)
tests_integration_daemon_hold_b_LDFLAGS = $(TEST_LINK_FLAGS) -no-install

# HTTP GET and a free port, without curl.
check_PROGRAMS += tests/integration/daemon_http
tests_integration_daemon_http_SOURCES = tests/integration/daemon_http.c

DAEMON_TESTS = \
	tests/integration/daemon_files.sh \
	tests/integration/daemon_changes.sh \
	tests/integration/daemon_kill.sh \
	tests/integration/daemon_load.sh \
	tests/integration/daemon_prometheus.sh \
	tests/integration/daemon_hostile.sh \
	tests/integration/daemon_sigint.sh \
	tests/integration/daemon_users.sh \
	tests/integration/daemon_bounds.sh
TESTS += $(DAEMON_TESTS)
EXTRA_DIST += $(DAEMON_TESTS) tests/integration/daemon_lib.sh
