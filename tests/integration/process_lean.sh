#!/bin/sh
# SPDX-License-Identifier: MIT
# The library a C program loads needs libc and liburcu-bp alone (and the loader; liburcu
# for the user callbacks' grace periods): no libstdc++,
# libdw, libelf, zlib or libbpf, which only liballocinfo-reader.so, loaded to render
# a report, needs. And a C program's report has no line of allocinfo's own making
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
deps=$(needed "$lib" | sed 's/liburcu-bp\.so\.[0-9]* //')
case $deps in
"ld-linux-x86-64.so.2 libc.so.6 " | "libc.so.6 " ) ;;
*) [ "${ALLOCINFO_SANITIZER:-no}" = no ] && fail "liballocinfo needs: $deps(expected libc and liburcu-bp alone)" ;;
esac

# A C program built with the header: its report while it holds 100 bytes.
unset ALLOCINFO_STORE_DIR
mkfifo "$work/go"
"$prog" hold "$work/go" >"$work/out" 2>"$work/err" &
pids="$pids $!"
wait_nonempty "$work/out"
held=$(cat "$work/out")
allocinfo -p "$held" >"$work/report" 2>"$work/report.err" ||
	fail "allocinfo -p $held: $(cat "$work/report.err")"
: >"$work/go"
wait "$!" || fail "process_prog hold: $(cat "$work/err")"
grep -q -E '^ +100 +1 .*process_prog\.c:[0-9]+ \[process_prog\] func:hold $' "$work/report" ||
	fail "no line for the program's 100 bytes: $(cat "$work/report")"
others=$(tail -n +3 "$work/report" | grep -v -E ' \[(process_prog|libc\.so\.6)\] ')
[ -z "$others" ] || fail "lines not of the program's or libc's making: $others"
exit 0
