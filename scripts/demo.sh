#!/bin/sh
# SPDX-License-Identifier: MIT
# Builds allocinfo and shows it at work: a demo program, built unchanged with
# allocinfo-cc, prints its own report.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
"$top/scripts/deps.sh"
build=$top/build
"$top/scripts/build.sh" "$build"
out=$build/demo
# Compiled from the top of the tree, so that its file names are relative to it (as
# the kernel's are).
cd "$top"
ALLOCINFO_INCLUDEDIR=$top/include ALLOCINFO_LIBDIR=$build/lib/.libs \
	"$build/tools/allocinfo-cc" -g -O2 Documentation/examples/demo.c -o "$out"
echo "\$ $out"
"$out"
