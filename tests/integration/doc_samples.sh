#!/bin/sh
# SPDX-License-Identifier: MIT
# The report samples of README.md and Documentation/user-guide.md are what
# scripts/demo.sh prints: the demo built the same way (allocinfo-cc -g -O2, from the
# top of the tree), run, and its first report compared with each sample, line by
# line (the samples leave out the space that ends every report line).
set -u
fail() { echo "FAIL: $*"; exit 1; }
[ "${ALLOCINFO_SANITIZER:-no}" = no ] || { echo "SKIP: built with a sanitizer"; exit 77; }
command -v gcc >/dev/null || { echo "SKIP: no gcc"; exit 77; }
T=$(mktemp -d "${TMPDIR:-/tmp}/allocinfo-samples.XXXXXX") || exit 99
trap 'rm -rf "$T"' EXIT
libdir=$(dirname "$ALLOCINFO_LIB")

(cd "$top_srcdir" && ALLOCINFO_INCLUDEDIR=$top_srcdir/include ALLOCINFO_LIBDIR=$libdir \
	sh "$top_builddir/tools/allocinfo-cc" -g -O2 Documentation/examples/demo.c -o "$T/demo") ||
	fail "cannot build the demo as scripts/demo.sh does"
"$T/demo" >"$T/out" || fail "the demo failed"
# The first report: from its version line to the blank line after it.
awk '/^allocinfo - version: 2.0$/ { on = 1 } on && /^$/ { exit } on { sub(/ +$/, ""); print }' \
	"$T/out" >"$T/report"
[ -s "$T/report" ] || fail "the demo printed no report"

# sample FILE: the first fenced block of FILE that is a report, trailing blanks cut.
sample() {
	awk '/^```/ { if (on) exit; fence = 1; next }
	     fence && /^allocinfo - version: 2.0$/ { on = 1 }
	     fence && !on { fence = 0 }
	     on { sub(/ +$/, ""); print }' "$1"
}
for doc in README.md Documentation/user-guide.md; do
	sample "$top_srcdir/$doc" >"$T/sample"
	[ -s "$T/sample" ] || fail "$doc has no report sample"
	if ! cmp -s "$T/report" "$T/sample"; then
		echo "$doc's sample differs from what scripts/demo.sh prints (diff sample printed):"
		diff "$T/sample" "$T/report"
		fail "$doc"
	fi
done
echo ok
