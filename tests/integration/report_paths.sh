#!/bin/sh
# SPDX-License-Identifier: MIT
# One path style per report: a file shows the same whether its line comes from a
# tagged call (__FILE__) or from debug info (a caller tag), relative to the
# directory the compiler ran in, as the compiler was given it; ALLOCINFO_PREFIX_MAP
# rewrites both alike. The program is built here from report_paths.cpp, in a
# directory of its own, as a user would build it.
set -u
fail() { echo "FAIL: $*"; exit 1; }
skip() { echo "SKIP: $*"; exit 77; }
[ "${ALLOCINFO_SANITIZER:-no}" = no ] || skip "built with a sanitizer: the program is built here plainly"
command -v g++ >/dev/null || skip "no g++"
T=$(mktemp -d "${TMPDIR:-/tmp}/allocinfo-paths.XXXXXX") || exit 99
trap 'rm -rf "$T"' EXIT
libdir=$(dirname "$ALLOCINFO_LIB")
mkdir -p "$T/proj/src"
cp "$top_srcdir/tests/integration/report_paths.cpp" "$T/proj/src/hold.cpp"
# build DIR SOURCE NAME: g++ -g, run in DIR, the header included first; the program
# is $T/NAME/hold (its module in the report is "hold").
build() {
	mkdir -p "$T/$3"
	(cd "$1" && g++ -std=c++17 -g -O1 -include allocinfo.h -I"$top_srcdir/include" "$2" \
		-o "$T/$3/hold" -L"$libdir" -Wl,-rpath,"$libdir" -lallocinfo) ||
		fail "cannot build $2 in $1"
}
# expect REPORT FILE [PRINTED]: the rows of hold.cpp all show FILE, the static and
# the caller tags (main's malloc and new, the template's, the lambda's and the
# constructor's new); with
# PRINTED, also stdout's buffer, which the C library allocated for main's printf
# (line 27) and charged to it, the C library being a wrapper.
expect() {
	want=$(printf '%12d %8d %s:19 [hold] func:main \n' 100 1 "$2"
	       printf '%12d %8d %s:20 [hold] func:main \n' 8 1 "$2"
	       printf '%12d %8d %s:12 [hold] func:box::make \n' 8 1 "$2"
	       printf '%12d %8d %s:22 [hold] func:main::<lambda> \n' 5 1 "$2"
	       printf '%12d %8d %s:14 [hold] func:shapes::grid::grid \n' 16 1 "$2"
	       [ -z "${3:-}" ] || printf '%12d %8d %s:27 [hold] func:main \n' 4096 1 "$2")
	got=$(grep ' \[hold\] ' "$1" | LC_ALL=C sort -t: -k2n)
	want=$(echo "$want" | LC_ALL=C sort -t: -k2n)
	[ "$got" = "$want" ] || { echo "want:"; echo "$want"; echo "got:"; echo "$got"; return 1; }
}

# 1. Compiled in its directory as "hold.cpp": both kinds say hold.cpp (debug info
#    alone would say $T/proj/src/hold.cpp).
build "$T/proj/src" hold.cpp a
"$T/a/hold" >"$T/a.out" || fail "the program failed"
expect "$T/a.out" hold.cpp || fail "compiled as hold.cpp"

# 2. Compiled from the project's top as "src/hold.cpp": src/hold.cpp, whatever the
#    directory the program runs in.
build "$T/proj" src/hold.cpp b
(cd / && "$T/b/hold") >"$T/b.out" || fail "the program failed"
expect "$T/b.out" src/hold.cpp || fail "compiled as src/hold.cpp"

# 3. ALLOCINFO_PREFIX_MAP applies to both kinds alike, the last matching entry wins;
#    a malformed entry is named and skipped.
ALLOCINFO_PREFIX_MAP="src/=lib/:bad:src/=proj/src/" "$T/b/hold" >"$T/c.out" 2>"$T/c.err" ||
	fail "the program failed"
expect "$T/c.out" proj/src/hold.cpp || fail "ALLOCINFO_PREFIX_MAP"
[ "$(cat "$T/c.err")" = "allocinfo: ALLOCINFO_PREFIX_MAP: 'bad' is not OLD=NEW; ignored" ] ||
	fail "malformed ALLOCINFO_PREFIX_MAP: $(cat "$T/c.err")"

# 4. Compiled with an absolute path: absolute for both; a map makes it relative.
build "$T/proj" "$T/proj/src/hold.cpp" d
"$T/d/hold" >"$T/d.out" || fail "the program failed"
expect "$T/d.out" "$T/proj/src/hold.cpp" || fail "compiled with an absolute path"
ALLOCINFO_PREFIX_MAP="$T/proj/=" "$T/d/hold" >"$T/e.out" || fail "the program failed"
expect "$T/e.out" src/hold.cpp || fail "an absolute path mapped"

# 5. The allocinfo tool agrees, and its JSON has the template's full name.
mkfifo "$T/in"
"$T/b/hold" wait <"$T/in" >"$T/f.out" &
pid=$!
exec 3>"$T/in"
n=0
until grep -q "^ready " "$T/f.out"; do
	n=$((n + 1)); [ $n -lt 200 ] || fail "the program did not start"; sleep 0.05
done
allocinfo -p "$pid" >"$T/f.cli" || fail "allocinfo -p"
expect "$T/f.cli" src/hold.cpp printed || fail "allocinfo -p"
allocinfo -p "$pid" --json >"$T/f.json" || fail "allocinfo -p --json"
grep -q '"file":"src/hold.cpp","line":12,"func":"box::make","full_func":"box<long>::make",' "$T/f.json" ||
	{ cat "$T/f.json"; fail "no full_func for box<long>::make"; }
exec 3>&-
wait "$pid" || fail "the program exited with $?"
echo ok
