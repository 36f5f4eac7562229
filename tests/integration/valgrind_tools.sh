#!/bin/sh
# SPDX-License-Identifier: MIT
# Programs built with allocinfo-cc under Valgrind, as projects run their tests under
# it. memcheck replaces malloc (by redirection, not by a symbol): the library counts
# nothing there, and memcheck's findings are the plain build's, exactly: a block
# still held at exit is "still reachable" (with a record in front its pointer would be
# 16 bytes in, "possibly lost"), every leak is found at its line with its own size
# (the small-block heap's blocks would not be seen at all), a write past a small
# block's end and a read after free are found. callgrind replaces nothing: there the
# program is counted.
set -u
[ "${ALLOCINFO_SANITIZER:-no}" = no ] || { echo "skip: Valgrind under a sanitizer build"; exit 77; }
command -v valgrind >/dev/null || { echo "skip: no valgrind"; exit 77; }
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
. "$top_srcdir/tests/integration/checkers_lib.sh"
export ALLOCINFO_CC=gcc
failed=0
fail() { echo "FAIL: $*"; failed=$((failed + 1)); }

build() {	# build OUT SOURCE FLAGS...
	_out=$1 _source=$2
	shift 2
	build_tagged "$cc_wrap" "$_out" -O0 -D_GNU_SOURCE "$@" "$_source" ||
		{ echo "FAIL: $_out: not built with the header"; exit 1; }
}

# memcheck RUN ARGS...: memcheck's output of the program.
memcheck() {
	timeout 300 valgrind --leak-check=full --show-leak-kinds=all "$@" >"$tmp/vg.log" 2>&1
}

# Held at exit: four blocks, small and large, reachable from a global.
cat >"$tmp/held.c" <<'PROG'
#include <stdlib.h>
#include <string.h>
char *held[4];
int main(void)
{
	held[0] = malloc(2000);
	held[1] = malloc(11);
	held[2] = calloc(1, 12);
	held[3] = strdup("x");
	return 0;
}
PROG
build held "$tmp/held.c"
memcheck "$tmp/held"
grep -q "still reachable: 2,025 bytes in 4 blocks" "$tmp/vg.log" &&
	grep -q "possibly lost: 0 bytes in 0 blocks" "$tmp/vg.log" &&
	grep -q "ERROR SUMMARY: 0 errors" "$tmp/vg.log" ||
	{ fail "held blocks: not 2,025 bytes in 4 blocks still reachable, no error"; cat "$tmp/vg.log"; }

# Leaks: each line that ends in the comment "leaks" is the first of the source's
# frames in one of memcheck's definitely-lost records.
build leaks "$src/sanitized_leaks.c"
memcheck "$tmp/leaks"
first_lines sanitized_leaks.c 'definitely lost in loss record' <"$tmp/vg.log" >"$tmp/found"
marked sanitized_leaks.c leaks >"$tmp/want"
if cmp -s "$tmp/found" "$tmp/want" && grep -q "definitely lost: 184 bytes in 11 blocks" "$tmp/vg.log"; then
	echo "ok: memcheck: $(wc -l <"$tmp/want") leaks, 184 bytes, each at its line"
else
	fail "memcheck leaks at lines $(tr '\n' ' ' <"$tmp/found"), marked $(tr '\n' ' ' <"$tmp/want")"
	cat "$tmp/vg.log"
fi

# Errors in small blocks.
cat >"$tmp/bugs.c" <<'PROG'
#include <stdlib.h>
int main(void)
{
	volatile char *p = malloc(24);
	p[24] = 1;
	free((void *)p);
	return p[0];
}
PROG
build bugs "$tmp/bugs.c"
memcheck "$tmp/bugs"
grep -q "Invalid write of size 1" "$tmp/vg.log" && grep -q "0 bytes after a block of size 24 alloc'd" "$tmp/vg.log" &&
	grep -q "Invalid read of size 1" "$tmp/vg.log" && grep -q "inside a block of size 24 free'd" "$tmp/vg.log" ||
	{ fail "memcheck: the write past the end or the read after free not found"; cat "$tmp/vg.log"; }

# To a terminal, the library says why it counts nothing.
if command -v script >/dev/null; then
	timeout 300 script -qec "valgrind -q $tmp/held" /dev/null 2>&1 |
		grep -q "allocinfo: running under a Valgrind tool that replaces malloc" ||
		fail "memcheck: the library does not say why nothing is counted"
fi

# callgrind: counted, exactly.
cat >"$tmp/counted.c" <<'PROG'
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
int main(void)
{
	char *a = malloc(11), *b = calloc(1, 12), *c = strdup("x"), *d = aligned_alloc(64, 64);
	allocinfo_print(1);
	return a && b && c && d ? 0 : 1;
}
PROG
build counted "$tmp/counted.c"
timeout 300 valgrind -q --tool=callgrind --callgrind-out-file=/dev/null "$tmp/counted" >"$tmp/out" 2>&1
grep -Eq '^ +89 +4 .*counted.c:6 ' "$tmp/out" ||
	{ fail "callgrind: counted.c:6 does not hold 89 bytes in 4 calls"; cat "$tmp/out"; }

[ $failed -eq 0 ] && echo ok
exit $((failed != 0))
