#!/bin/sh
# SPDX-License-Identifier: MIT
# A program that forks while one of its threads is inside the library's loading of
# a module: every child runs and exits 0, and nothing is said. glibc's fork() copies
# the loader's half-made state; a child that then loads a library itself failed
# ("undefined symbol") or crashed, and one whose parent was inside the reader
# module's symbolizer waited for its lock forever.
#   - "printing": a thread of the program prints the first report (which loads the
#     reader module, then symbolizes) while the main thread forks; each child prints
#     a report too. Needs nothing.
#   - "early" under the BPF store: the library's own thread loads the BPF module
#     10 ms after start-up while the program forks from its first millisecond.
# An LD_AUDIT module (libloaderpause.so) holds ld.so for a while at the end of each
# such load, its new objects mapped but the loader's state not yet consistent, so
# that forks land there: before the fix every "printing" run failed, and 5 in 6
# "early" runs (1 in 6 without the pause); ten of those.
. "$top_srcdir/tests/integration/process_lib.sh"

pause=$top_builddir/tests/integration/.libs/libloaderpause.so
[ -f "$pause" ] || fail "$pause is not built"

# run MODULE MS WHAT...: process_prog WHAT..., with ld.so held MS milliseconds as it
# finishes loading the library's MODULE; it must end 0, say nothing, and not hang.
# Under a sanitizer, whose runtime must come first, without the audit module.
run() {
	audit=$pause
	[ "${ALLOCINFO_SANITIZER:-no}" = no ] || audit=""
	module=$1 ms=$2
	shift 2
	LD_AUDIT=$audit LOADER_PAUSE_AT=consistent LOADER_PAUSE_MATCH=$module \
		LOADER_PAUSE_MS=$ms timeout 120 "$prog" "$@" >"$work/out" 2>"$work/err"
	rc=$?
	[ "$rc" = 0 ] || fail "process_prog $* ended with $rc: $(head -c 600 "$work/err")"
}

# Not under a sanitizer: GCC 12's sanitizer allocators hold none of their size-class
# locks across fork, and a child forked while another thread refills a class waits
# for that lock forever (SizeClassAllocator64::GetFromAllocator, under libasan and
# libtsan alike). With libasan that happens without this library: a two-thread
# program allocating in both and forking 300 times hangs.
ran=""
if [ "${ALLOCINFO_SANITIZER:-no}" = no ]; then
	for i in 1 2 3; do
		run liballocinfo-reader 40 printing 100
		[ ! -s "$work/err" ] || fail "process_prog printing said: $(head -c 600 "$work/err")"
		[ "$(cat "$work/out")" -gt 0 ] || fail "process_prog printing made no child"
	done
	ran=printing
fi

nothing_more() {
	[ -n "$ran" ] && exit 0
	skip "$1"
}
[ "$(id -u)" = 0 ] || nothing_more "not root: no BPF store"
[ "$(stat -f -c %T /sys/fs/bpf 2>/dev/null)" = bpf_fs ] || nothing_more "no bpffs"
export ALLOCINFO_STORE=bpf
for i in 1 2 3 4 5 6 7 8 9 10; do
	run liballocinfo-bpf 100 early 200
	if grep -q -e 'no BPF support' -e 'cannot create BPF maps' "$work/err"; then
		nothing_more "no BPF store here"
	fi
	[ ! -s "$work/err" ] || fail "ALLOCINFO_STORE=bpf process_prog early said: $(head -c 600 "$work/err")"
done
exit 0
