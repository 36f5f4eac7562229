#!/bin/sh
# SPDX-License-Identifier: MIT
# The library a C program loads needs libc alone (and the loader): no liburcu-bp, which
# it loads when a callback or profiler is first registered (a process that registers
# none never maps it); no libstdc++,
# libdw, libelf, zlib or libbpf, which only liballocinfo-reader.so, loaded to render
# a report, needs. A BPF-store process keeps liballocinfo-bpf.so mapped, and copies
# it at every fork: it needs libbpf (with libelf and zlib) and no more, its libstdc++
# linked in; the reader module needs no libbpf. And a C program's report has no
# line of allocinfo's own making
# (libstdc++'s emergency exception pool was one: 72704 bytes): every line is the
# program's or the C library's.
. "$top_srcdir/tests/integration/process_lib.sh"
command -v readelf >/dev/null || skip "no readelf"
lib=$top_builddir/lib/.libs/liballocinfo.so
reader=$top_builddir/lib/.libs/liballocinfo-reader.so
[ -f "$reader" ] || fail "no $reader"

needed() {
	readelf -d "$1" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | LC_ALL=C sort | tr '\n' ' '
}
deps=$(needed "$lib")
case $deps in
"ld-linux-x86-64.so.2 libc.so.6 " | "libc.so.6 " ) ;;
*) [ "${ALLOCINFO_SANITIZER:-no}" = no ] && fail "liballocinfo needs: $deps(expected libc alone)" ;;
esac

# The BPF module, in a build with the BPF store.
bpfmod=$top_builddir/lib/.libs/liballocinfo-bpf.so
if [ -f "$bpfmod" ]; then
	deps=$(needed "$bpfmod")
	case $deps in
	"ld-linux-x86-64.so.2 libbpf.so.1 libc.so.6 libgcc_s.so.1 " | \
	"ld-linux-x86-64.so.2 libbpf.so.1 libc.so.6 " | "libbpf.so.1 libc.so.6 "*) ;;
	*) fail "liballocinfo-bpf.so needs: $deps(expected libbpf, libc and libgcc_s)" ;;
	esac
	exports=$(nm -D --defined-only "$bpfmod" | awk '{ print $3 }' | tr '\n' ' ')
	[ "$exports" = "allocinfo__bpf_v1 " ] ||
		fail "liballocinfo-bpf.so exports more than its table: $exports"
fi
case $(needed "$reader") in
*libbpf*) fail "liballocinfo-reader.so needs libbpf: $(needed "$reader")" ;;
esac
exports=$(nm -D --defined-only "$reader" | awk '{ print $3 }' | tr '\n' ' ')
[ "$exports" = "allocinfo__reader_v1 " ] ||
	fail "liballocinfo-reader.so exports more than its table: $(echo "$exports" | cut -c1-300)"

# A C program built with the header: its report while it holds 100 bytes, and its
# mappings.
unset ALLOCINFO_STORE_DIR
mkfifo "$work/go"
"$prog" hold "$work/go" >"$work/out" 2>"$work/err" &
pids="$pids $!"
wait_nonempty "$work/out"
held=$(cat "$work/out")
allocinfo -p "$held" >"$work/report" 2>"$work/report.err" ||
	fail "allocinfo -p $held: $(cat "$work/report.err")"
maps=$(cat "/proc/$held/maps")
: >"$work/go"
wait "$!" || fail "process_prog hold: $(cat "$work/err")"
# (A sanitizer build's test programs link it: configure.ac says why.)
case $maps in
*liburcu-bp*) [ "${ALLOCINFO_SANITIZER:-no}" = no ] &&
	fail "liburcu-bp is mapped in a process with no callback or profiler" ;;
esac

# With a callback registered (ALLOCINFO_CALLBACKS), it is loaded.
if [ -n "${CBLIB:-}" ] && [ "${ALLOCINFO_SANITIZER:-no}" = no ]; then
	rm -f "$work/out2"
	ALLOCINFO_CALLBACKS=$CBLIB "$prog" hold "$work/go" >"$work/out2" 2>"$work/err2" &
	pids="$pids $!"
	wait_nonempty "$work/out2"
	maps=$(cat "/proc/$(cat "$work/out2")/maps")
	: >"$work/go"
	wait "$!" || fail "process_prog hold with a callback: $(cat "$work/err2")"
	case $maps in
	*liburcu-bp*) ;;
	*) fail "liburcu-bp is not mapped in a process with a callback registered" ;;
	esac
fi
grep -q -E '^ +100 +1 .*process_prog\.c:[0-9]+ \[process_prog\] func:hold $' "$work/report" ||
	fail "no line for the program's 100 bytes: $(cat "$work/report")"
others=$(tail -n +3 "$work/report" | grep -v -E ' \[(process_prog|libc\.so\.6)\] ')
[ -z "$others" ] || fail "lines not of the program's or libc's making: $others"
exit 0
