# SPDX-License-Identifier: MIT
# Tests of the BPF store: bpftool on the pinned maps, the report iterator, BPF and
# shm processes in one report, the unprivileged fallback, pins at exit and after
# kill -9, fork, counters read by batch lookups. They need root, bpffs at /sys/fs/bpf, bpftool and a build with BPF
# support; without, they skip (77).

# -no-install: the test runs the real binary (its name is the module), not a wrapper.
check_PROGRAMS += tests/integration/bpf_prog
tests_integration_bpf_prog_SOURCES = tests/integration/bpf_prog.c
tests_integration_bpf_prog_CFLAGS = $(AM_CFLAGS) -g -O1
tests_integration_bpf_prog_LDADD = $(TEST_LDADD)
tests_integration_bpf_prog_LDFLAGS = $(TEST_LINK_FLAGS) -no-install

BPF_TESTS = \
	tests/integration/bpf_maps.sh \
	tests/integration/bpf_iter.sh \
	tests/integration/bpf_tokens.sh \
	tests/integration/bpf_names.sh \
	tests/integration/bpf_daemon_names.sh \
	tests/integration/bpf_mixed.sh \
	tests/integration/bpf_unpriv.sh \
	tests/integration/bpf_pins.sh \
	tests/integration/bpf_fork.sh \
	tests/integration/bpf_batch.sh
TESTS += $(BPF_TESTS)
EXTRA_DIST += $(BPF_TESTS) tests/integration/bpf_lib.sh
