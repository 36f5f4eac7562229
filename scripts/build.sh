#!/bin/sh
# SPDX-License-Identifier: MIT
# Configures and builds allocinfo out of tree: scripts/build.sh DIR [configure options]
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
dir=$1
shift
[ -x "$top/configure" ] || (cd "$top" && ./autogen.sh >/dev/null 2>&1)
mkdir -p "$dir"
cd "$dir"
[ -f Makefile ] || "$top/configure" --quiet "$@" >/dev/null
make -j"$(nproc)" >/dev/null
