#!/bin/sh
# SPDX-License-Identifier: MIT
# The library leaves the program's descriptors alone: after start-up the lowest free
# descriptor is still 3 and the only ones it keeps are at 1000 and above (the
# store's memfd, the BPF tags map); a program that does dup2(1, 5) and forks keeps
# fd 5 in the child, whatever the store.
. "$top_srcdir/tests/integration/process_lib.sh"
unset ALLOCINFO_STORE_DIR	# the default: memfd stores

stores="auto shm none"
# The BPF store too where there is one (a process without says why on stderr).
if [ "$(id -u)" = 0 ] && [ "$(stat -f -c %T /sys/fs/bpf 2>/dev/null)" = bpf_fs ] &&
	[ -z "$(ALLOCINFO_STORE=bpf "$prog" fds 2>&1 >/dev/null)" ]; then
	stores="$stores bpf"
fi

# What the program sees with the library doing nothing (descriptors inherited from
# whoever runs the test included).
base=$(ALLOCINFO=never "$prog" fds 3>&- 4>&- 5>&- 6>&- 7>&- 8>&- 9>&-)
case $base in
"lowest 3 open 0 1 2"*) ;;
*) fail "ALLOCINFO=never: expected fds 0-2 open and 3 free, got '$base'" ;;
esac
for store in $stores; do
	out=$(ALLOCINFO_STORE=$store "$prog" fds 3>&- 4>&- 5>&- 6>&- 7>&- 8>&- 9>&- 2>"$work/err") ||
		fail "ALLOCINFO_STORE=$store: process_prog fds failed: $(cat "$work/err")"
	[ "$out" = "$base" ] || fail "ALLOCINFO_STORE=$store: expected '$base', got '$out'"
	out=$(ALLOCINFO_STORE=$store "$prog" dup5 2>"$work/err") ||
		fail "ALLOCINFO_STORE=$store: the child lost fd 5: $(cat "$work/err")"
	[ "$out" = child ] || fail "ALLOCINFO_STORE=$store: expected 'child' on fd 5, got '$out'"
done
exit 0
