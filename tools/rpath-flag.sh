#!/bin/sh
# SPDX-License-Identifier: MIT
# rpath-flag.sh LIBDIR: prints -Wl,-rpath,LIBDIR, or nothing when LIBDIR is a
# directory the dynamic linker searches by itself (its built-in ones, and those of
# /etc/ld.so.conf, found through the cache that ldconfig writes).
dir=${1:?usage: rpath-flag.sh LIBDIR}
canon() { readlink -f "$1" 2>/dev/null || printf '%s\n' "$1"; }
want=$(canon "$dir")
ldconfig=$(command -v ldconfig || echo /sbin/ldconfig)
for d in /lib /usr/lib /lib64 /usr/lib64 \
	$("$ldconfig" -v -N -X 2>/dev/null | sed -n 's|^\(/[^:]*\):.*|\1|p'); do
	[ "$(canon "$d")" = "$want" ] && exit 0
done
printf '%s\n' "-Wl,-rpath,$dir"
