#!/bin/sh
# SPDX-License-Identifier: MIT
# ALLOCINFO_SUBALLOC_FNS and ALLOCINFO_SUBFREE_FNS: a pool library that never calls
# malloc is counted per caller line with " allocator:pool_alloc", exactly, in a
# program preloaded and in one built with the header; blocks given back leave no
# row; the pool's own return values pass through; without the variables nothing is
# counted; each malformed description gets its one line and the program runs on.
set -u
I=$top_builddir/tests/integration
fail=0
err=$(mktemp) || exit 99
trap 'rm -f "$err" "$err.want"' EXIT

# run VARIANT: the program's output (its lines, then its report).
run() {
	if [ "$1" = plain ]; then
		LD_PRELOAD=$ALLOCINFO_LIB "$I/suballoc_prog_plain" 2>"$err"
	else
		"$I/suballoc_prog_tagged" 2>"$err"
	fi
}

# expect OUTPUT BYTES CALLS LINE MODULE: one pool row exactly so.
expect() {
	row=$(printf '%12d %8d ' "$2" "$3")
	if ! printf '%s\n' "$1" | grep -F -- "$row" |
		grep -E -- "(^|/| )suballoc_prog\.c:$4 \[$5\] func:main allocator:pool_alloc \$" >/dev/null; then
		echo "missing: ${row}suballoc_prog.c:$4 [$5] func:main allocator:pool_alloc"
		printf '%s\n' "$1"
		fail=1
	fi
}

# Under a sanitizer the library is linked statically: the program cannot find
# allocinfo_print() by dlsym, nor be preloaded.
[ "${ALLOCINFO_SANITIZER:-no}" = no ] || { echo "skip: the report by dlsym under a sanitizer"; exit 77; }
variants="plain tagged"
export ALLOCINFO_SUBALLOC_FNS='pool_alloc(pZ)p' ALLOCINFO_SUBFREE_FNS='pool_free(pP)->pool_alloc'
for v in $variants; do
	out=$(run $v) || { echo "$v: the program failed"; cat "$err"; exit 1; }
	[ -s "$err" ] && { echo "$v: unexpected stderr:"; cat "$err"; fail=1; }
	set -- $(printf '%s\n' "$out" | sed -n 's/^lines three=\([0-9]*\) one=\([0-9]*\) gone=\([0-9]*\) out=\([0-9]*\)$/\1 \2 \3 \4/p')
	[ $# -eq 4 ] || { echo "$v: no line numbers"; printf '%s\n' "$out"; exit 1; }
	[ "$4" = 3 ] || { echo "$v: pool_free returned $4, expected 3"; fail=1; }
	expect "$out" 200 2 "$1" suballoc_prog_$v
	expect "$out" 40 1 "$2" suballoc_prog_$v
	n=$(printf '%s\n' "$out" | grep -c ' allocator:')
	[ "$n" = 2 ] || { echo "$v: $n rows with allocator:, expected 2"; printf '%s\n' "$out"; fail=1; }

	# Not declared: the pool is not seen at all.
	out=$(ALLOCINFO_SUBALLOC_FNS= ALLOCINFO_SUBFREE_FNS= run $v) || { echo "$v: failed"; exit 1; }
	printf '%s\n' "$out" | grep ' allocator:' >/dev/null &&
		{ echo "$v: allocator: rows without the descriptions"; fail=1; }

	# Declared without its free: blocks given back stay counted (no uncharge).
	out=$(ALLOCINFO_SUBFREE_FNS= run $v) || { echo "$v: failed"; exit 1; }
	expect "$out" 300 3 "$1" suballoc_prog_$v
	expect "$out" 500 1 "$3" suballoc_prog_$v

	# Each malformed description: its one line; the good ones still apply.
	out=$(ALLOCINFO_SUBALLOC_FNS='pool_alloc(pZ)p pool_x(pz)p pool_y(pZ) pool_w(zzzzzzZ)p' \
		ALLOCINFO_SUBFREE_FNS='pool_free(pP) pool_free(pP)->9x pool_free(pP)->pool_alloc' \
		run $v) || { echo "$v: the program failed"; exit 1; }
	cat >"$err.want" <<'MSG'
allocinfo: ALLOCINFO_SUBALLOC_FNS: 'pool_x(pz)p': no Z (the size argument); ignored
allocinfo: ALLOCINFO_SUBALLOC_FNS: 'pool_y(pZ)': no return type p after ')'; ignored
allocinfo: ALLOCINFO_SUBALLOC_FNS: 'pool_w(zzzzzzZ)p': more than 6 arguments; ignored
allocinfo: ALLOCINFO_SUBFREE_FNS: 'pool_free(pP)': no '->ALLOCATOR' after ')'; ignored
allocinfo: ALLOCINFO_SUBFREE_FNS: 'pool_free(pP)->9x': no '->ALLOCATOR' after ')'; ignored
MSG
	if ! cmp -s "$err" "$err.want"; then
		echo "$v: the malformed descriptions' lines differ:"; diff "$err.want" "$err"; fail=1
	fi
	expect "$out" 200 2 "$1" suballoc_prog_$v
	expect "$out" 40 1 "$2" suballoc_prog_$v
done
[ $fail = 0 ] && echo ok
exit $fail
