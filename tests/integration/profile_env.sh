#!/bin/sh
# SPDX-License-Identifier: MIT
# The built-in heap profiler's environment: each malformed value gets exactly one
# "allocinfo:" line naming the variable and the value, the program runs on and exits
# 0, with the default for that value (or, for an empty ALLOCINFO_PROFILE, without the
# profiler). Sizes take KiB, MiB and GiB. A file, or a symlink, already at a profile's
# name is neither followed nor replaced: one line, and the program runs on. A setuid
# program run by another user makes no profile.
. "$top_srcdir/tests/integration/profile_lib.sh"

# bad VAR VALUE EXPECTED_LINE FILES: runs the workload with VAR=VALUE (and base
# $work/bad); stderr must be exactly EXPECTED_LINE, and FILES files made.
bad() {
	rm -f "$work"/bad.*
	env ALLOCINFO_PROFILE="$work/bad" "$1=$2" "$prog" small >"$work/out" 2>"$work/err" ||
		fail "$1='$2': the program failed: $(cat "$work/err")"
	[ "$(cat "$work/err")" = "$3" ] ||
		fail "$1='$2': expected the line '$3', got: $(cat "$work/err")"
	[ "$(count_files "$work/bad.*")" = "$4" ] ||
		fail "$1='$2': expected $4 files, found: $(ls "$work")"
}

size_line="is not a size (bytes, or a number with KiB, MiB or GiB)"
bad ALLOCINFO_PROFILE_SAMPLE_RATE 12kb \
	"allocinfo: ALLOCINFO_PROFILE_SAMPLE_RATE='12kb' $size_line; using 524288" 1
bad ALLOCINFO_PROFILE_SAMPLE_RATE 0 \
	"allocinfo: ALLOCINFO_PROFILE_SAMPLE_RATE='0' is not a rate; using 524288" 1
bad ALLOCINFO_PROFILE_ALLOC_INTERVAL -5 \
	"allocinfo: ALLOCINFO_PROFILE_ALLOC_INTERVAL='-5' $size_line; using 0" 1
bad ALLOCINFO_PROFILE_INUSE_INTERVAL "1 MiB" \
	"allocinfo: ALLOCINFO_PROFILE_INUSE_INTERVAL='1 MiB' $size_line; using 0" 1
bad ALLOCINFO_PROFILE_INUSE_INTERVAL 99999999999999999999 \
	"allocinfo: ALLOCINFO_PROFILE_INUSE_INTERVAL='99999999999999999999' $size_line; using 0" 1
bad ALLOCINFO_PROFILE_TIME_INTERVAL 2s \
	"allocinfo: ALLOCINFO_PROFILE_TIME_INTERVAL='2s' is not a number of seconds; using 0 (none)" 1
bad ALLOCINFO_PROFILE_TIME_INTERVAL 1.2.3 \
	"allocinfo: ALLOCINFO_PROFILE_TIME_INTERVAL='1.2.3' is not a number of seconds; using 0 (none)" 1
# Well-formed ones say nothing.
bad ALLOCINFO_PROFILE_SAMPLE_RATE 16KiB "" 1
bad ALLOCINFO_PROFILE_TIME_INTERVAL 30.5 "" 1

# An empty base: one line, no profiler.
env ALLOCINFO_PROFILE= "$prog" small >"$work/out" 2>"$work/err" || fail "empty base: failed"
[ "$(cat "$work/err")" = "allocinfo: ALLOCINFO_PROFILE='' names no file; no heap profile" ] ||
	fail "empty base: $(cat "$work/err")"

# A symlink at the profile's name (the program's pid is the shell's, which execs it).
mkdir "$work/d"
: >"$work/victim"
chmod 644 "$work/victim"
sh -c 'ln -s "$1" "$2.$$.0.pb.gz" && exec env ALLOCINFO_PROFILE="$2" "$3" small' sh \
	"$work/victim" "$work/d/p" "$prog" >"$work/out" 2>"$work/err" ||
	fail "symlink: the program failed: $(cat "$work/err")"
[ ! -s "$work/victim" ] || fail "symlink: the profile was written through the symlink"
[ "$(stat -c %a "$work/victim")" = 644 ] || fail "symlink: the target's mode changed"
link=$(ls "$work"/d/p.*.0.pb.gz)
[ -L "$link" ] || fail "symlink: $link was replaced"
[ "$(wc -l <"$work/err")" = 1 ] &&
	grep -q "^allocinfo: cannot write the heap profile $link (exit): File exists$" "$work/err" ||
	fail "symlink: expected one line: $(cat "$work/err")"
[ "$(ls -A "$work/d" | wc -l)" = 1 ] || fail "symlink: files left: $(ls -A "$work/d")"

# A setuid-root program run by nobody: one line, no profile.
if [ "$(id -u)" = 0 ] && id nobody >/dev/null 2>&1 && command -v su >/dev/null &&
	[ "${ALLOCINFO_SANITIZER:-no}" = no ]; then
	chmod 755 "$work"
	mkdir -m 777 "$work/s"
	cp "$prog" "$work/s/prog"
	chown root:root "$work/s/prog"
	chmod 4755 "$work/s/prog"
	if su -s /bin/sh nobody -c "test -x '$work/s/prog'"; then
		su -s /bin/sh nobody -c \
			"ALLOCINFO_PROFILE='$work/s/p' '$work/s/prog' small" >"$work/out" 2>"$work/err" ||
			fail "setuid: the program failed: $(cat "$work/err")"
		[ "$(cat "$work/err")" = \
			"allocinfo: ALLOCINFO_PROFILE is ignored in a setuid or setgid program" ] ||
			fail "setuid: $(cat "$work/err")"
		[ "$(count_files "$work/s/p.*")" = 0 ] || fail "setuid: a profile was made"
	fi
fi
echo ok
