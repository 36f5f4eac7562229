# SPDX-License-Identifier: MIT
# Sourced by the tests of readers facing another user's stores and files: skips
# (77) unless root with the user nobody and a C compiler. Provides a work directory
# W that nobody may use, a store directory that nobody may write (ALLOCINFO_STORE_DIR
# points there), and:
#
#   as_nobody CMD...      runs CMD as nobody (no groups)
#   build_prog OUT CFLAGS...
#                         compiles nobody_prog.c to OUT (owned by nobody)
#   run_prog PROG         runs PROG as nobody under LD_PRELOAD; sets PID once its
#                         store is published
#   run_root_prog PROG    the same, as root
#   nobody_sleeps         starts sleep as nobody; sets PID once it runs sleep
#   forge ARGS...         tests/integration/cli_forge ARGS, as nobody
#   row BYTES CALLS FILE:LINE MODULE FUNC [TOKENS]
#                         one report line as the kernel's format prints it
set -u
fail() { echo "FAIL: $*" >&2; exit 1; }
skip() { echo "SKIP: $*" >&2; exit 77; }

[ "$(id -u)" = 0 ] || skip "needs root, to run programs as nobody"
[ "${ALLOCINFO_SANITIZER:-no}" = no ] || skip "LD_PRELOAD under a sanitizer"
id nobody >/dev/null 2>&1 || skip "no user nobody"
command -v setpriv >/dev/null || skip "no setpriv"
CC=${CC:-cc}
command -v "$CC" >/dev/null || skip "no C compiler"
: "${top_srcdir:?}" "${top_builddir:?}" "${ALLOCINFO_STORE_DIR:?run through tests/run-test.sh}"

LIB=$(readlink -f "$top_builddir/lib/.libs/liballocinfo.so")
[ -f "$LIB" ] || skip "no shared liballocinfo"
ALLOCINFO=$top_builddir/tools/allocinfo
W=$(mktemp -d "${TMPDIR:-/tmp}/allocinfo-nobody.XXXXXX") || exit 99
chmod 755 "$W"
mkdir -m 1777 "$W/store"
mkdir -m 755 "$W/bin" && chown nobody "$W/bin"
ALLOCINFO_STORE_DIR=$W/store
export ALLOCINFO_STORE_DIR
# The library where nobody can read it (the build tree may be closed to others).
cp "$LIB" "$W/liballocinfo.so" && chmod 755 "$W/liballocinfo.so" || exit 99
PIDS=

cleanup() {
	for p in $PIDS; do kill -9 "$p" 2>/dev/null; done
	wait 2>/dev/null
	rm -rf "$W"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

as_nobody() {
	setpriv --reuid=nobody --regid="$(id -g nobody)" --clear-groups "$@"
}

build_prog() {
	out=$1
	shift
	"$CC" -O1 -fno-inline -o "$out" "$top_srcdir/tests/integration/nobody_prog.c" "$@" ||
		exit 99
	chown nobody "$out"
}

run_prog() {
	start_prog "setpriv --reuid=nobody --regid=$(id -g nobody) --clear-groups" "$1"
}

run_root_prog() {
	start_prog "" "$1"
}

start_prog() {	# AS PROG
	rm -f "$W/bin/ready"
	$1 env ALLOCINFO_STORE=shm LD_PRELOAD="$W/liballocinfo.so" "$2" "$W/bin/ready" &
	PIDS="$PIDS $!"
	n=0
	until [ -s "$W/bin/ready" ] && [ -s "$W/store/allocinfo-$(cat "$W/bin/ready")" ]; do
		n=$((n + 1))
		[ $n -lt 400 ] || fail "$* did not start"
		sleep 0.025
	done
	PID=$(cat "$W/bin/ready")
}

nobody_sleeps() {
	setpriv --reuid=nobody --regid="$(id -g nobody)" --clear-groups sleep 60 &
	PID=$!
	PIDS="$PIDS $PID"
	sleep_exe=$(command -v sleep | xargs readlink -f)
	n=0
	until [ "$(readlink /proc/$PID/exe)" = "$sleep_exe" ]; do
		n=$((n + 1))
		[ $n -lt 400 ] || fail "sleep did not start"
		sleep 0.01
	done
}

cp "$top_builddir/tests/integration/cli_forge" "$W/cli_forge" && chmod 755 "$W/cli_forge" ||
	exit 99
forge() {
	as_nobody "$W/cli_forge" "$@" || fail "cli_forge $*"
}

row() {
	printf '%12s %8s %s [%s] func:%s%s \n' "$1" "$2" "$3" "$4" "$5" "${6:+ $6}"
}
