#!/bin/sh
# SPDX-License-Identifier: MIT
# Installed at a prefix of its own (configure --prefix=DIR, make install), allocinfo
# builds programs that run and are counted: through the installed allocinfo-cc and
# allocinfo-c++, and with `pkg-config --cflags --libs allocinfo`. The scripts and
# allocinfo.pc hold the real paths, and programs find the library by their RUNPATH.
set -u
[ "${ALLOCINFO_SANITIZER:-no}" = no ] || exit 77	# an installed library has no runtime
command -v pkg-config >/dev/null || exit 77
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
prefix=$tmp/prefix	# a directory the dynamic linker does not search
fail=0
failed() { echo "FAILED: $*"; [ -f "$tmp/log" ] && tail -30 "$tmp/log"; fail=1; }

mkdir "$tmp/build"
cd "$tmp/build" || exit 99
# Only what a program built against allocinfo needs: the library and its reader module
# (which renders a process's own report), the header, the wrappers and allocinfo.pc
# (installed by make's own install rules). Unoptimized: what is checked here is what
# is installed and where, and -O0 builds it in two thirds of the time.
if ! "$top_srcdir/configure" -q --prefix="$prefix" --disable-bpf CFLAGS=-O0 CXXFLAGS=-O0 \
	>"$tmp/log" 2>&1 ||
	! make -j2 lib/liballocinfo.la lib/liballocinfo-reader.la tools/allocinfo-cc \
		tools/allocinfo-c++ allocinfo.pc \
		>"$tmp/log" 2>&1 ||
	! make install-libLTLIBRARIES install-pkglibLTLIBRARIES install-includeHEADERS \
		install-allocinfoincHEADERS \
		install-allocinfowrapHEADERS install-allocinfowrapjemallocHEADERS \
		install-nodist_binSCRIPTS install-pkgconfigDATA >"$tmp/log" 2>&1; then
	failed "configure --prefix=$prefix && make install"
	exit 1
fi

# No unexpanded variable and no path outside the prefix in what was installed.
for f in "$prefix/bin/allocinfo-cc" "$prefix/bin/allocinfo-c++" \
	"$prefix/lib/pkgconfig/allocinfo.pc"; do
	if grep -En '\$\{(prefix|exec_prefix)\}|@[A-Za-z_]+@' "$f" >"$tmp/log"; then
		failed "$f holds unexpanded variables"
	fi
done
grep -q "^incdir=\${ALLOCINFO_INCLUDEDIR:-$prefix/include}\$" "$prefix/bin/allocinfo-cc" ||
	{ grep -n incdir= "$prefix/bin/allocinfo-cc" >"$tmp/log"; failed "allocinfo-cc: include dir"; }
grep -q "^Libs: -L\${libdir} -Wl,-rpath,$prefix/lib -lallocinfo\$" \
	"$prefix/lib/pkgconfig/allocinfo.pc" ||
	{ cat "$prefix/lib/pkgconfig/allocinfo.pc" >"$tmp/log"; failed "allocinfo.pc: Libs"; }

cat >"$tmp/prog.c" <<'PROG'
#include <stdlib.h>
#include <string.h>
#include <allocinfo.h>
int main(void)
{
	void *keep = malloc(3000);
	memset(keep, 1, 3000);
	allocinfo_print(1);
	free(keep);
	return 0;
}
PROG
cp "$tmp/prog.c" "$tmp/prog.cpp"
sed -i 's|#include <allocinfo.h>||' "$tmp/prog.c"	# the wrapper includes it

# run NAME: the program runs with no help from the environment, and its tagged
# allocation is in its report.
run() {
	if ! readelf -d "$tmp/$1" | grep -q "RUNPATH.*\[$prefix/lib\]"; then
		readelf -d "$tmp/$1" >"$tmp/log"; failed "$1: RUNPATH is not $prefix/lib"
	fi
	if ! env -u LD_LIBRARY_PATH -u LD_PRELOAD ALLOCINFO=1 ALLOCINFO_STORE=none \
		"$tmp/$1" >"$tmp/log" 2>&1; then
		failed "$1 does not run"
	elif ! grep -Eq '^ +3000 +1 .*prog\.c(pp)?:6 ' "$tmp/log"; then
		failed "$1: its allocation is not counted"
	fi
}
unset ALLOCINFO_INCLUDEDIR ALLOCINFO_LIBDIR
cd "$tmp" || exit 99
"$prefix/bin/allocinfo-cc" -O2 prog.c -o cc_prog >"$tmp/log" 2>&1 &&
	run cc_prog || failed "allocinfo-cc"
"$prefix/bin/allocinfo-c++" -O2 prog.cpp -o cxx_prog >"$tmp/log" 2>&1 &&
	run cxx_prog || failed "allocinfo-c++"
flags=$(PKG_CONFIG_PATH=$prefix/lib/pkgconfig pkg-config --cflags --libs allocinfo)
gcc -O2 -x c prog.cpp $flags -o pc_prog >"$tmp/log" 2>&1 && run pc_prog ||
	failed "pkg-config --cflags --libs allocinfo ($flags)"

# The rule for an RPATH: none into a directory the dynamic linker searches.
for d in /usr/lib /lib/x86_64-linux-gnu /usr/lib/x86_64-linux-gnu; do
	[ -d "$d" ] || continue
	r=$(sh "$top_srcdir/tools/rpath-flag.sh" "$d")
	[ -z "$r" ] || { echo "$r" >"$tmp/log"; failed "rpath-flag.sh $d"; }
done
[ "$(sh "$top_srcdir/tools/rpath-flag.sh" "$prefix/lib")" = "-Wl,-rpath,$prefix/lib" ] ||
	failed "rpath-flag.sh $prefix/lib"
[ $fail = 0 ] && echo ok
exit $fail
