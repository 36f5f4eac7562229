#!/bin/sh
# SPDX-License-Identifier: MIT
# No store outlives its process, with no daemon and no --gc: 1,000 children that
# allocate, then _exit, are killed by SIGKILL, or exec an uninstrumented program,
# leave nothing in /dev/shm (the stores are memfds). With the BPF store (fewer
# children: each loads its iterator), the pins of those that ended without exit
# handlers are swept by the next BPF store's start: then nothing is left either.
. "$top_srcdir/tests/integration/process_lib.sh"
unset ALLOCINFO_STORE_DIR	# the default: memfd stores

# leftovers FILE: the /dev/shm files and BPF pin directories of the pids in FILE
# made since the test started (other programs' older ones may hold reused pids).
# One find for all of them: a find per pid made this test take a minute.
touch "$work/start"
sleep 1	# a second of mtime resolution between that mark and what follows
leftovers() {
	{
		find /dev/shm -maxdepth 1 -name 'allocinfo-*' -newer "$work/start" 2>/dev/null
		find /sys/fs/bpf/allocinfo -mindepth 1 -maxdepth 1 -newer "$work/start" 2>/dev/null
	} | awk 'NR == FNR { pid[$0] = 1; next }
		 { p = $0; sub(/.*[-\/]/, "", p); if (p in pid) print }' "$1" -
}

# 1,000 children; 200 under a sanitizer, whose start-up in each child is most of the
# time and is not what this looks at.
n=1000
[ "${ALLOCINFO_SANITIZER:-no}" = no ] || n=200
for store in auto shm; do
	ALLOCINFO_STORE=$store "$prog" children $n >"$work/$store.pids" 2>"$work/$store.err" ||
		fail "ALLOCINFO_STORE=$store: process_prog children: $(cat "$work/$store.err")"
	[ "$(wc -l <"$work/$store.pids")" = $n ] || fail "ALLOCINFO_STORE=$store: not $n children"
	left=$(leftovers "$work/$store.pids")
	[ -z "$left" ] || fail "ALLOCINFO_STORE=$store: left behind: $(echo "$left" | head -5)"
	[ ! -s "$work/$store.err" ] || fail "ALLOCINFO_STORE=$store said: $(cat "$work/$store.err")"
done

# The BPF store, where there is one.
[ "$(id -u)" = 0 ] || exit 0
[ "$(stat -f -c %T /sys/fs/bpf 2>/dev/null)" = bpf_fs ] || exit 0
ALLOCINFO_STORE=bpf "$prog" children 30 >"$work/bpf.pids" 2>"$work/bpf.err" ||
	fail "ALLOCINFO_STORE=bpf: process_prog children: $(cat "$work/bpf.err")"
if grep -q -e 'no BPF support' -e 'cannot create BPF maps' "$work/bpf.err"; then
	exit 0
fi
[ ! -s "$work/bpf.err" ] || fail "ALLOCINFO_STORE=bpf said: $(cat "$work/bpf.err")"
ALLOCINFO_STORE=bpf "$prog" fds >/dev/null 2>"$work/sweep.err" ||
	fail "ALLOCINFO_STORE=bpf: process_prog fds: $(cat "$work/sweep.err")"
left=$(leftovers "$work/bpf.pids")
[ -z "$left" ] || fail "ALLOCINFO_STORE=bpf: left behind after the next start: $(echo "$left" | head -5)"
exit 0
