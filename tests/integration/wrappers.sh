#!/bin/sh
# SPDX-License-Identifier: MIT
# ALLOCINFO_WRAPPERS: allocations made inside declared wrappers (a library of nested
# wrappers called through function pointers, and a wrapper of the program's own) are
# charged to the first caller outside them, with " via:" naming the outermost; in a
# program rebuilt with the header and in one preloaded; totals unchanged.
set -u
[ "${ALLOCINFO_SANITIZER:-no}" = no ] || { echo "skip: LD_PRELOAD under a sanitizer"; exit 77; }
I=$top_builddir/tests/integration
fail=0

# run VARIANT WRAPPERS: the program's output (its lines, then its report).
run() {
	if [ "$1" = plain ]; then
		ALLOCINFO_WRAPPERS=$2 LD_PRELOAD=$ALLOCINFO_LIB "$I/wrappers_prog_plain" \
			"$I/.libs/libwrapfix_plain.so" 2>"$err"
	else
		ALLOCINFO_WRAPPERS=$2 "$I/wrappers_prog_tagged" "$I/.libs/libwrapfix_tagged.so" 2>"$err"
	fi
}
err=$(mktemp) || exit 99
trap 'rm -f "$err"' EXIT

# expect OUTPUT BYTES CALLS FILE LINE MODULE FUNC [VIA]: one row exactly so.
expect() {
	tail=" func:$7"
	[ -n "${8:-}" ] && tail="$tail via:$8"
	row=$(printf '%12d %8d ' "$2" "$3")
	if ! printf '%s\n' "$1" | grep -F -- "$row" | grep -E -- "(^|/| )$4:$5 \[$6\]$tail \$" >/dev/null; then
		echo "missing: $row$4:$5 [$6]$tail"
		fail=1
	fi
}

# total OUTPUT: bytes and calls of the rows of the wrappers' allocations (the
# program's other lines hold the C library's, stdout's buffer).
total() {
	printf '%s\n' "$1" | grep -E 'wrappers_lib\.c:| via:|func:prog_xmalloc ' |
		awk '{ b += $1; c += $2 } END { print b, c }'
}

for v in plain tagged; do
	out=$(run $v "fix_*, prog_xmalloc") || { echo "$v: the program failed"; cat "$err"; exit 1; }
	[ -s "$err" ] && { echo "$v: unexpected stderr:"; cat "$err"; fail=1; }
	set -- $(printf '%s\n' "$out" | sed -n 's/^lines alloc=\([0-9]*\) alloc2=\([0-9]*\) strdup=\([0-9]*\) realloc=\([0-9]*\) own=\([0-9]*\)$/\1 \2 \3 \4 \5/p')
	[ $# -eq 5 ] || { echo "$v: no line numbers"; printf '%s\n' "$out"; exit 1; }
	m=wrappers_prog_$v
	expect "$out" 300 3 wrappers_prog.c "$1" $m main fix_alloc
	expect "$out" 2000 2 wrappers_prog.c "$2" $m main fix_alloc2
	expect "$out" 7 1 wrappers_prog.c "$3" $m main fix_strdup
	expect "$out" 4000 1 wrappers_prog.c $(($4 + 1)) $m main fix_realloc
	expect "$out" 5000 1 wrappers_prog.c "$5" $m main prog_xmalloc
	if printf '%s\n' "$out" | grep -E 'wrappers_lib\.c:|func:prog_xmalloc' >/dev/null; then
		echo "$v: a wrapper's own line is still charged"
		fail=1
	fi
	with=$(total "$out")

	# Undeclared, the wrappers' lines hold the same totals.
	out=$(run $v "") || { echo "$v: the program failed"; exit 1; }
	expect "$out" 2307 6 wrappers_lib.c 19 libwrapfix_$v.so fix_alloc
	expect "$out" 4000 1 wrappers_lib.c 36 libwrapfix_$v.so fix_realloc
	printf '%s\n' "$out" | grep ' via:' >/dev/null && { echo "$v: via: without wrappers"; fail=1; }
	without=$(total "$out")
	[ "$with" = "$without" ] || { echo "$v: totals differ: $with with wrappers, $without without"; fail=1; }
	[ "$with" = "11307 8" ] || { echo "$v: totals $with, expected 11307 8"; fail=1; }

	# A malformed entry: one line naming it; the others still apply.
	out=$(run $v "fix_*,no/slash,prog_xmalloc") || { echo "$v: the program failed"; exit 1; }
	msg="allocinfo: ALLOCINFO_WRAPPERS: 'no/slash' is not a function name or pattern (unexpected character); ignored"
	if [ "$(cat "$err")" != "$msg" ]; then
		echo "$v: expected exactly: $msg"
		echo "got:"; cat "$err"
		fail=1
	fi
	expect "$out" 5000 1 wrappers_prog.c "$5" $m main prog_xmalloc

	# The same wrappers described in liballocs' language: the same rows.
	out=$(ALLOCINFO_WRAPPERS= ALLOCINFO_ALLOC_FNS="fix_alloc(Z)p fix_alloc2(Z)p,fix_strdup(p)p fix_realloc(pZ)p prog_xmalloc(Z)p" \
		ALLOCINFO_FREE_FNS="fix_free(P)" run $v "") || { echo "$v: the program failed"; exit 1; }
	[ -s "$err" ] && { echo "$v: ALLOC_FNS: unexpected stderr:"; cat "$err"; fail=1; }
	expect "$out" 300 3 wrappers_prog.c "$1" $m main fix_alloc
	expect "$out" 2000 2 wrappers_prog.c "$2" $m main fix_alloc2
	expect "$out" 7 1 wrappers_prog.c "$3" $m main fix_strdup
	expect "$out" 4000 1 wrappers_prog.c $(($4 + 1)) $m main fix_realloc
	expect "$out" 5000 1 wrappers_prog.c "$5" $m main prog_xmalloc
	# Each malformed description: one line naming its fault; the good one applies.
	ALLOCINFO_ALLOC_FNS="bad(Q)p nop f(Z) g(ZZ)p fix_alloc(Z)p" ALLOCINFO_FREE_FNS="other(p)" \
		ALLOCINFO_SUBFREE_FNS="pool_free(pP)" run $v "" >/dev/null
	cat >"$err.want" <<'MSG'
allocinfo: ALLOCINFO_ALLOC_FNS: 'bad(Q)p': an argument is not z, Z, p, P, i or I; ignored
allocinfo: ALLOCINFO_ALLOC_FNS: 'nop': no '(' after the name; ignored
allocinfo: ALLOCINFO_ALLOC_FNS: 'f(Z)': no return type p after ')'; ignored
allocinfo: ALLOCINFO_ALLOC_FNS: 'g(ZZ)p': more than one significant (capital) argument; ignored
allocinfo: ALLOCINFO_FREE_FNS: 'other(p)': no P (the pointer freed); ignored
allocinfo: ALLOCINFO_SUBFREE_FNS: 'pool_free(pP)': no '->ALLOCATOR' after ')'; ignored
MSG
	if ! cmp -s "$err" "$err.want"; then
		echo "$v: the malformed descriptions' lines differ:"; diff "$err.want" "$err"; fail=1
	fi
	rm -f "$err.want"
done
[ $fail = 0 ] && echo ok
exit $fail
