#!/bin/sh
# SPDX-License-Identifier: MIT
# A setuid-root program run by nobody reads no ALLOCINFO_* variable: with
# ALLOCINFO_STORE_DIR naming a root-only directory nothing is created there, and
# ALLOCINFO_DEBUG, ALLOCINFO_HEAP and the rest are not even looked at (no line on
# stderr). The same program run by root itself, not in secure execution, obeys them:
# the test can tell the two apart.
. "$top_srcdir/tests/integration/process_lib.sh"
[ "$(id -u)" = 0 ] || skip "needs root"
id nobody >/dev/null 2>&1 || skip "no user nobody"
command -v su >/dev/null || skip "no su"
[ "${ALLOCINFO_SANITIZER:-no}" = no ] || skip "a sanitizer's runtime refuses setuid programs"

chmod 755 "$work"
cp "$prog" "$work/process_prog"
chown root:root "$work/process_prog"
chmod 4755 "$work/process_prog"
su -s /bin/sh nobody -c "test -x '$work/process_prog'" ||
	skip "nobody cannot run programs under $work"
ldd "$work/process_prog" | grep -q liballocinfo || fail "process_prog does not link liballocinfo"
mkdir -m 700 "$work/rootonly"
mkfifo -m 600 "$work/go"
: >"$work/out"
chmod 666 "$work/out"
vars="ALLOCINFO_STORE=shm ALLOCINFO_STORE_DIR=$work/rootonly ALLOCINFO_DEBUG=1 ALLOCINFO_HEAP=bogus"

# run_held WHO: runs the program as WHO (root or nobody) with $vars until released;
# sets $held to its pid and $listing to the root-only directory's contents meanwhile.
run_held() {
	: >"$work/out"
	if [ "$1" = root ]; then
		env $vars "$work/process_prog" hold "$work/go" >"$work/out" 2>"$work/err.$1" &
	else
		su -s /bin/sh nobody -c \
			"exec env $vars '$work/process_prog' hold '$work/go' >'$work/out'" \
			2>"$work/err.$1" &
	fi
	pids="$pids $!"
	wait_nonempty "$work/out"
	held=$(cat "$work/out")
	listing=$(ls -A "$work/rootonly")
	: >"$work/go"	# releases it
	wait $! || fail "process_prog as $1 failed: $(cat "$work/err.$1")"
}

# Not secure (root runs it): the variables apply.
run_held root
[ "$listing" = "allocinfo-$held" ] ||
	fail "as root: expected allocinfo-$held in the store directory, found '$listing'"
grep -q "^allocinfo: ALLOCINFO_HEAP='bogus' is not valid" "$work/err.root" ||
	fail "as root: ALLOCINFO_HEAP was not read: $(cat "$work/err.root")"

# Secure execution (setuid root, run by nobody): none of them.
run_held nobody
[ -z "$listing" ] || fail "setuid as nobody: the store directory holds '$listing'"
[ ! -s "$work/err.nobody" ] || fail "setuid as nobody said: $(cat "$work/err.nobody")"
exit 0
