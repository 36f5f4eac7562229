#!/bin/bash
# SPDX-License-Identifier: MIT
# Writes lib/runtime/common-text.ld: liballocinfo.so's .text with the functions that
# instrumented processes run first (theory-of-operation.md, "The library's own
# memory"). They are found by running make bench's workloads, counting or not, built
# with the header or preloaded, natively with a uprobe at the entry of each of the
# library's functions (scripts/function_hits.sh: root and the kernel's tracefs), and
# under callgrind. Natively, because a lock is contended only between threads that
# really run at once; under callgrind, for the functions a uprobe cannot catch.
#
# Usage: scripts/common-text.sh BUILD_DIR
# after make bench's programs are built there. Run it again when the allocation path,
# the start-up or the exit change: tests/integration/common_text.sh names what ran
# outside the list.
set -eu
export LC_ALL=C
top=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:?usage: common-text.sh BUILD_DIR}" && pwd)
lib=$(readlink -f "$build/lib/.libs/liballocinfo.so")
bench=$build/tests/benchmark
command -v valgrind >/dev/null || { echo "common-text.sh: valgrind is needed" >&2; exit 1; }
for prog in ctree cxx prodcons interp pairs phase; do
	[ -x "$bench/${prog}_tagged" ] || { echo "common-text.sh: build $bench/${prog}_tagged first" >&2; exit 1; }
done
. "$top/scripts/function_hits.sh"

work=$(mktemp -d)
trap 'hits_stop; rm -rf "$work"' EXIT
hits_start "$lib" || exit 1

: >"$work/ran"
# The workloads, each counting or not, built with the header or preloaded.
: >"$work/runs"
for v in on off preload; do
	for w in "ctree 2" "cxx 2" "prodcons 20000" "interp 2" "pairs 32 1 10000" \
		"pairs 4096 2 2000" "phase 40000 10000"; do
		echo "$v $w" >>"$work/runs"
	done
done
# command VARIANT PROGRAM: the command line that runs it.
command_of() {
	case $1 in
	on) echo env ALLOCINFO=1 "$bench/${2}_tagged" ;;
	off) echo env ALLOCINFO=0 "$bench/${2}_tagged" ;;
	preload) echo env ALLOCINFO=1 LD_PRELOAD="$lib" "$bench/${2}_plain" ;;
	esac
}

# Natively, with the probes: a lock is contended only between threads that really run
# at once. Then under callgrind, which cannot run code a probe is in, for the
# functions a uprobe cannot catch (one whose first instruction has a lock prefix).
n=0
while read -r variant prog args; do
	n=$((n + 1))
	hits_read | sort -k2,2 >"$work/before"
	# shellcheck disable=SC2046,SC2086
	$(command_of "$variant" "$prog") $args >/dev/null ||
		{ echo "common-text.sh: $variant $prog $args failed" >&2; exit 1; }
	hits_read | sort -k2,2 | join -1 2 -2 2 - "$work/before" | awk '$2 > $3 { print $1 }' \
		>"$work/run.$n"
done <"$work/runs"
hits_stop
n=0
while read -r variant prog args; do
	n=$((n + 1))
	# shellcheck disable=SC2046,SC2086
	valgrind --tool=callgrind --demangle=no --trace-children=yes \
		--callgrind-out-file="$work/cg.%p.out" $(command_of "$variant" "$prog") $args \
		>/dev/null 2>&1 </dev/null ||
		{ echo "common-text.sh: $variant $prog $args failed under callgrind" >&2; exit 1; }
	for f in "$work"/cg.*.out; do
		callgrind_functions "$f"
		rm -f "$f"
	done >>"$work/run.$n"
	sort -u "$work/run.$n" | sed "s/^/$variant /" >>"$work/ran"
done <"$work/runs"

# Only the library's own functions, which each have their section (-ffunction-sections).
# First those that ran in the most counting runs, then in the most preloaded ones,
# then with counting off: the more processes run a function, the nearer the start,
# so that a counting process touches the fewest pages.
nm --defined-only "$lib" | awk '$2 ~ /^[tTwW]$/ { print $3 }' | sort -u >"$work/defined"
awk 'NR == FNR { defined[$1] = 1; next }
	($2 in defined) { n[$2 " " $1]++; seen[$2] = 1 }
	END { for (f in seen) printf "%d %d %d %s\n", n[f " on"], n[f " preload"], n[f " off"], f }' \
	"$work/defined" "$work/ran" | sort -k1,1nr -k2,2nr -k3,3nr -k4,4 | awk '{ print $4 }' >"$work/common"

# The default script's .text (ld --verbose), with the common functions first. Put
# before .fini, it takes every input section the default one would have: that one is
# left empty and dropped, and the library keeps one .text, which valgrind reads its
# symbols from.
out=$top/lib/runtime/common-text.ld
{
	echo "/* SPDX-License-Identifier: MIT */"
	echo "/*"
	echo " * liballocinfo.so's .text, with the functions that instrumented processes run first,"
	echo " * so that the pages the kernel maps around the ones they touch hold little else"
	echo " * (theory-of-operation.md, \"The library's own memory\"). Written by"
	echo " * scripts/common-text.sh from runs of make bench's workloads, native and under"
	echo " * callgrind; the most used first. A name that no longer exists matches nothing."
	echo " */"
	echo "SECTIONS"
	echo "{"
	echo "	.text :"
	echo "	{"
	echo "		*libc_nonshared.a:*(.text .text.*)	/* atexit(), pthread_atfork() */"
	echo "		*crtbeginS.o(.text .text.*)	/* the C runtime's start-up and exit */"
	sed 's/.*/\t\t*(.text.& .text.startup.&)/' "$work/common"
	echo "		*(__rseq_failure)	/* rseq's abort handlers (cpu_shard.cpp): no symbol of their own */"
	echo "		. = ALIGN(16);"
	echo "		HIDDEN(__start_allocinfo_stack_attr = .);	/* stack_attr.cpp */"
	echo "		*(allocinfo_stack_attr)"
	echo "		HIDDEN(__stop_allocinfo_stack_attr = .);"
	echo "		*(.text.unlikely .text.*_unlikely .text.unlikely.*)"
	echo "		*(.text.exit .text.exit.*)"
	echo "		*(.text.startup .text.startup.*)"
	echo "		*(.text.hot .text.hot.*)"
	echo "		*(SORT(.text.sorted.*))"
	echo "		*(.text .stub .text.* .gnu.linkonce.t.*)"
	echo "		*(.gnu.warning)"
	echo "	}"
	echo "}"
	echo "INSERT BEFORE .fini;"
} >"$out"
echo "common-text.sh: $(wc -l <"$work/common") functions in $out"
