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
ALLOCINFO_INCLUDEDIR=$top/include ALLOCINFO_LIBDIR=$build/lib/.libs \
	"$build/tools/allocinfo-cc" -g -O2 "$top/Documentation/examples/demo.c" -o "$out"
echo "\$ $out"
"$out"
