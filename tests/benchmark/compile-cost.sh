#!/bin/bash
# SPDX-License-Identifier: MIT
# What building with allocinfo costs the build: compile time (CPU, user + system) and
# code size (text: the `size` column, code and read-only data) of sources compiled
# through allocinfo-cc / allocinfo-c++, against the same sources compiled plain, in
# the same run. Called by `make bench` (top_builddir, top_srcdir set); prints rows.
#
#   generated N sites   gen-sites.sh's N malloc() call sites (default 100000,
#                       --quick 20000), gcc -O2
#   allocinfo's tools   this project's own C++ sources (tools/, lib/reader/), g++ -O2
#
# Columns: plain; through the wrapper (each call site calls its object's fast-path
# function, the default); the same with -DALLOCINFO_NO_INLINE (every call site calls
# the library).
set -u
: "${top_builddir:?run through make bench}"
sites=100000
[ "${1:-}" = --quick ] && sites=20000
[ "${1:-}" = --memory ] && exit 0	# bench.sh's memory rows only: these are compile costs
work=$(mktemp -d "${TMPDIR:-/tmp}/allocinfo-compile.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
export ALLOCINFO_INCLUDEDIR=$top_srcdir/include ALLOCINFO_LIBDIR=$top_builddir/lib/.libs
cc_wrap=$top_builddir/tools/allocinfo-cc
cxx_wrap=$top_builddir/tools/allocinfo-c++

# cost COMPILER FLAGS... -- FILES...: "CPU-seconds text-bytes" of compiling each file
# to an object (-c), summed.
cost() {
	local cc=$1 flags=() files=() cpu=0 text=0 f t
	shift
	while [ "$1" != -- ]; do flags+=("$1"); shift; done
	shift
	files=("$@")
	for f in "${files[@]}"; do
		/usr/bin/time -f '%U %S' -o "$work/t" "$cc" "${flags[@]}" -c "$f" -o "$work/o.o" \
			2>"$work/log" || { cat "$work/log" >&2; echo "nan nan"; return; }
		t=$(tail -1 "$work/t")
		cpu=$(awk -v a="$cpu" -v t="$t" 'BEGIN { split(t, x, " "); print a + x[1] + x[2] }')
		text=$((text + $(size "$work/o.o" | awk 'NR == 2 { print $1 }')))
	done
	echo "$cpu $text"
}

row() {	# row LABEL "PLAIN" "WRAPPED" "NO_INLINE"
	local label=$1 p=$2 w=$3 n=$4
	awk -v l="$label" -v p="$p" -v w="$w" -v n="$n" 'BEGIN {
		split(p, P, " "); split(w, W, " "); split(n, N, " ")
		printf "%-34s %-14s %-16s%-16s\n", l " time", sprintf("%.2f s", P[1]),
			sprintf("%.2fx", W[1] / P[1]), sprintf("%.2fx", N[1] / P[1])
		printf "%-34s %-14s %-16s%-16s\n", l " text", sprintf("%.0f KiB", P[2] / 1024),
			sprintf("%.2fx", W[2] / P[2]), sprintf("%.2fx", N[2] / P[2]) }'
}

command -v /usr/bin/time >/dev/null || { echo "compile-cost.sh: needs /usr/bin/time" >&2; exit 0; }
echo "  compile cost" >&2
sh "$top_srcdir/tests/benchmark/gen-sites.sh" "$sites" | grep -v '#include <allocinfo.h>' \
	>"$work/sites.c"
echo '#include <stdlib.h>' | cat - "$work/sites.c" >"$work/sites_plain.c"
plain=$(cost gcc -O2 -- "$work/sites_plain.c")
wrapped=$(ALLOCINFO_CC=gcc cost "$cc_wrap" -O2 -- "$work/sites_plain.c")
noinline=$(ALLOCINFO_CC=gcc cost "$cc_wrap" -O2 -DALLOCINFO_NO_INLINE -- "$work/sites_plain.c")

printf '%-34s %-14s %-16s%-16s\n' "compile cost (CPU, text size)" "plain" "allocinfo-cc" \
	"NO_INLINE"
row "generated $sites sites" "$plain" "$wrapped" "$noinline"

srcs=("$top_srcdir"/tools/*.cpp "$top_srcdir"/lib/reader/*.cpp)
inc=(-std=gnu++17 -O2 -I"$top_srcdir/include" -I"$top_srcdir/lib/runtime"
	-I"$top_srcdir/lib/store" -I"$top_srcdir/lib/reader" -I"$top_builddir"
	-I"$top_builddir/tools/bpf"
	-include "$top_builddir/config.h" $(pkg-config --cflags fuse3 2>/dev/null))
plain=$(cost g++ "${inc[@]}" -- "${srcs[@]}")
wrapped=$(ALLOCINFO_CXX=g++ cost "$cxx_wrap" "${inc[@]}" -- "${srcs[@]}")
noinline=$(ALLOCINFO_CXX=g++ cost "$cxx_wrap" "${inc[@]}" -DALLOCINFO_NO_INLINE -- "${srcs[@]}")
row "allocinfo's tools (C++)" "$plain" "$wrapped" "$noinline"
