#!/bin/sh
# SPDX-License-Identifier: MIT
# The stack the library needs on a thread's first allocations, when they are the
# process's first walk out of a wrapper, a new tag and a new call site: at most
# 4 KiB more than with counting off (ALLOCINFO=never), so that a thread of
# PTHREAD_STACK_MIN (16 KiB, its TLS and descriptor included) keeps room for the
# program's own frames. It needed 7.9 KiB more while three PATH_MAX buffers, a
# 4 KiB pagemap buffer and lazy binding's saved registers could be on it at once.
. "$top_srcdir/tests/integration/process_lib.sh"
[ "${ALLOCINFO_SANITIZER:-no}" = no ] || skip "a sanitizer's runtime has its own stack needs"

off=$(ALLOCINFO=never "$prog" stack) || fail "ALLOCINFO=never process_prog stack failed"
on=$("$prog" stack) || fail "process_prog stack failed"
echo "stack used: $off bytes counting off, $on counting"
[ "$on" -le $((off + 4096)) ] ||
	fail "the first allocations took $((on - off)) bytes more stack than counting off"
exit 0
