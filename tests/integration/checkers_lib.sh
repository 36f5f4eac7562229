# SPDX-License-Identifier: MIT
# Sourced by sanitizers.sh and valgrind_tools.sh, which build programs with the
# compiler wrappers as a project's checking job would, then read the checkers'
# reports for the programs' lines.
#
#   build_tagged WRAPPER OUT ARGS...  compiles and links ARGS into $tmp/OUT with the
#                                     header (-g, frame pointers); false, with the
#                                     compiler's messages, when it does not build or
#                                     the wrapper fell back to compiling without it
#   marked FILE MARK                  the line numbers of tests/integration/FILE
#                                     that end in the comment MARK
#   first_lines FILE START            from a checker's report on stdin: in each
#                                     record that begins with a line matching the
#                                     regular expression START, the line number of
#                                     the first frame in FILE; sorted, one a line
set -u
: "${top_srcdir:?}" "${top_builddir:?}" "${tmp:?}"
export ALLOCINFO_INCLUDEDIR=$top_srcdir/include ALLOCINFO_LIBDIR=$top_builddir/lib/.libs
export ALLOCINFO_CC_VERBOSE=1
cc_wrap=$top_builddir/tools/allocinfo-cc
cxx_wrap=$top_builddir/tools/allocinfo-c++
src=$top_srcdir/tests/integration

build_tagged() {
	_w=$1 _out=$2
	shift 2
	if ! "$_w" -g -fno-omit-frame-pointer "$@" -o "$tmp/$_out" >"$tmp/build.log" 2>&1; then
		echo "$_out: does not build"; sed -n 1,20p "$tmp/build.log"; return 1
	elif grep -q 'compiling again' "$tmp/build.log"; then
		echo "$_out: built without the header"; sed -n 1,20p "$tmp/build.log"; return 1
	fi
}

marked() { grep -nE "(/\* $2 \*/|// $2)\$" "$src/$1" | cut -d: -f1; }

first_lines() {
	awk -v f="$1:" -v start="$2" '$0 ~ start { first = 1; next }
		first && (i = index($0, f)) {
			line = substr($0, i + length(f)); sub(/[^0-9].*/, "", line)
			print line; first = 0 }' | sort -n
}
