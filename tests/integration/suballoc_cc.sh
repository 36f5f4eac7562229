#!/bin/sh
# SPDX-License-Identifier: MIT
# allocinfo-cc's options: --allocinfo-suballoc-fns and --allocinfo-subfree-fns count
# a pool linked into the program itself (which no routing can reach in an unchanged
# binary) per caller line with " allocator:pool_alloc"; --allocinfo-wrappers and
# --allocinfo-alloc-fns are built into the program and charge wrappers' allocations
# to their callers; malformed descriptions get their one line, at build or at run
# time; separate compile and link steps work, a pool in a static archive too; a
# described function the program never calls need not exist, one it calls must; an
# unknown option is refused.
set -u
[ "${ALLOCINFO_SANITIZER:-no}" = no ] || { echo "skip: allocinfo-cc links the shared library"; exit 77; }
src=$top_srcdir/tests/integration
I=$top_builddir/tests/integration
export ALLOCINFO_INCLUDEDIR=$top_srcdir/include ALLOCINFO_LIBDIR=$top_builddir/lib/.libs
cc_wrap=$top_builddir/tools/allocinfo-cc
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
fail=0

# row OUTPUT BYTES CALLS FILE:LINE MODULE TAIL: one row exactly so.
row() {
	r=$(printf '%12d %8d ' "$2" "$3")
	if ! printf '%s\n' "$1" | grep -F -- "$r" | grep -E -- "(^|/| )$4 \[$5\] func:main $6 \$" >/dev/null; then
		echo "missing: $r$4 [$5] func:main $6"
		printf '%s\n' "$1"
		fail=1
	fi
}

# The pool in the program itself, with a malformed description among the good ones.
if ! "$cc_wrap" -g -O2 -I"$src" --allocinfo-suballoc-fns='pool_alloc(pZ)p pool_bad(pZ)' \
	--allocinfo-subfree-fns='pool_free(pP)->pool_alloc,x[ab](P)' "$src/suballoc_prog.c" \
	"$src/suballoc_pool.c" -o "$tmp/pool" -ldl 2>"$tmp/err"; then
	echo "the pool program does not build"; cat "$tmp/err"; exit 1
fi
cat >"$tmp/want" <<'MSG'
allocinfo-cc: --allocinfo-suballoc-fns: 'pool_bad(pZ)': no return type p after ')'; ignored
allocinfo-cc: --allocinfo-subfree-fns: 'x[ab](P)': does not start with a function name; ignored
MSG
cmp -s "$tmp/err" "$tmp/want" || { echo "build messages differ:"; diff "$tmp/want" "$tmp/err"; fail=1; }
out=$("$tmp/pool" 2>"$tmp/err") || { echo "the pool program failed"; exit 1; }
[ -s "$tmp/err" ] && { echo "unexpected stderr:"; cat "$tmp/err"; fail=1; }
set -- $(printf '%s\n' "$out" | sed -n 's/^lines three=\([0-9]*\) one=\([0-9]*\) gone=\([0-9]*\) out=\([0-9]*\)$/\1 \2 \3 \4/p')
[ $# -eq 4 ] || { echo "no line numbers"; printf '%s\n' "$out"; exit 1; }
[ "$4" = 3 ] || { echo "pool_free returned $4, expected 3"; fail=1; }
row "$out" 200 2 "suballoc_prog.c:$1" pool allocator:pool_alloc
row "$out" 40 1 "suballoc_prog.c:$2" pool allocator:pool_alloc
n=$(printf '%s\n' "$out" | grep -c ' allocator:')
[ "$n" = 2 ] || { echo "$n rows with allocator:, expected 2"; fail=1; }

# Compiled and linked in separate steps: the same.
"$cc_wrap" -g -O2 -I"$src" --allocinfo-suballoc-fns='pool_alloc(pZ)p' -c "$src/suballoc_prog.c" \
	-o "$tmp/prog.o" && "$cc_wrap" -g -O2 -c "$src/suballoc_pool.c" -o "$tmp/pool.o" &&
	"$cc_wrap" --allocinfo-suballoc-fns='pool_alloc(pZ)p' "$tmp/prog.o" "$tmp/pool.o" \
		-o "$tmp/pool2" -ldl || { echo "separate steps do not build"; exit 1; }
out=$("$tmp/pool2") || { echo "the second pool program failed"; exit 1; }
row "$out" 300 3 "suballoc_prog.c:$1" pool2 allocator:pool_alloc
row "$out" 500 1 "suballoc_prog.c:$3" pool2 allocator:pool_alloc

# The pool in a static archive named before the wrappers: still taken, still counted.
ar rcs "$tmp/libpool.a" "$tmp/pool.o" &&
	"$cc_wrap" --allocinfo-suballoc-fns='pool_alloc(pZ)p' "$tmp/prog.o" -L"$tmp" -lpool \
		-o "$tmp/pool4" -ldl || { echo "the pool from an archive does not link"; exit 1; }
out=$("$tmp/pool4") || { echo "pool4 failed"; exit 1; }
row "$out" 300 3 "suballoc_prog.c:$1" pool4 allocator:pool_alloc

# A described function the program never calls need not exist (the options may sit in
# LDFLAGS for every link of a project); one it calls must, as without allocinfo.
"$cc_wrap" -g -O2 --allocinfo-suballoc-fns='nowhere_alloc(pZ)p' \
	--allocinfo-subfree-fns='nowhere_free(pP)->nowhere_alloc' "$tmp/prog.o" "$tmp/pool.o" \
	-o "$tmp/pool5" -ldl || { echo "an unused, undefined description breaks the link"; fail=1; }
"$cc_wrap" -g -O2 --allocinfo-suballoc-fns='pool_alloc(pZ)p' "$tmp/prog.o" -o "$tmp/pool6" \
	-ldl 2>"$tmp/err" && { echo "a call to a missing pool_alloc linked"; fail=1; }
grep -q "undefined reference to .pool_alloc'" "$tmp/err" ||
	{ echo "no undefined reference to pool_alloc:"; cat "$tmp/err"; fail=1; }

# Without the options, the environment cannot reach a pool inside the program.
"$cc_wrap" -g -O2 -I"$src" "$src/suballoc_prog.c" "$src/suballoc_pool.c" -o "$tmp/pool3" -ldl ||
	{ echo "the plain pool program does not build"; exit 1; }
out=$(ALLOCINFO_SUBALLOC_FNS='pool_alloc(pZ)p' "$tmp/pool3") || { echo "pool3 failed"; exit 1; }
printf '%s\n' "$out" | grep ' allocator:' >/dev/null && { echo "pool3: allocator: rows"; fail=1; }

# Wrappers built in: the program's own wrapper described, the library's by pattern.
if ! "$cc_wrap" -g -O2 -I"$src" --allocinfo-wrappers='fix_*,no/slash' \
	--allocinfo-alloc-fns='prog_xmalloc(Z)p' "$src/wrappers_prog.c" -o "$tmp/wrapped" -ldl \
	2>"$tmp/err"; then
	echo "the wrapped program does not build"; cat "$tmp/err"; exit 1
fi
out=$("$tmp/wrapped" "$I/.libs/libwrapfix_plain.so" 2>"$tmp/err") || { echo "wrapped failed"; exit 1; }
want="allocinfo: ALLOCINFO_WRAPPERS (built in): 'no/slash' is not a function name or pattern (unexpected character); ignored"
[ "$(cat "$tmp/err")" = "$want" ] || { echo "run-time messages differ: want: $want"; cat "$tmp/err"; fail=1; }
set -- $(printf '%s\n' "$out" | sed -n 's/^lines alloc=\([0-9]*\) alloc2=\([0-9]*\) strdup=\([0-9]*\) realloc=\([0-9]*\) own=\([0-9]*\)$/\1 \2 \3 \4 \5/p')
[ $# -eq 5 ] || { echo "no line numbers"; printf '%s\n' "$out"; exit 1; }
row "$out" 300 3 "wrappers_prog.c:$1" wrapped via:fix_alloc
row "$out" 2000 2 "wrappers_prog.c:$2" wrapped via:fix_alloc2
row "$out" 7 1 "wrappers_prog.c:$3" wrapped via:fix_strdup
row "$out" 5000 1 "wrappers_prog.c:$5" wrapped via:prog_xmalloc
# The environment adds to what is built in: --allocinfo-free-fns alone leaves fix_* out.
"$cc_wrap" -g -O2 -I"$src" --allocinfo-free-fns='fix_free(P)' "$src/wrappers_prog.c" \
	-o "$tmp/wrapped2" -ldl || { echo "wrapped2 does not build"; exit 1; }
out=$(ALLOCINFO_WRAPPERS='fix_alloc' "$tmp/wrapped2" "$I/.libs/libwrapfix_plain.so") ||
	{ echo "wrapped2 failed"; exit 1; }
row "$out" 300 3 "wrappers_prog.c:$1" wrapped2 via:fix_alloc

# An option of ours it does not know: refused, as a compiler refuses one.
if "$cc_wrap" --allocinfo-wrapers=x -c "$src/suballoc_pool.c" -o "$tmp/x.o" 2>"$tmp/err"; then
	echo "an unknown --allocinfo- option was accepted"; fail=1
fi
grep -q "^allocinfo-cc: unknown option '--allocinfo-wrapers=x'" "$tmp/err" ||
	{ echo "no message for the unknown option:"; cat "$tmp/err"; fail=1; }
[ $fail = 0 ] && echo ok
exit $fail
