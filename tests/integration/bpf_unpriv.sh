#!/bin/sh
# SPDX-License-Identifier: MIT
# The same program as an unprivileged user: ALLOCINFO_STORE=auto falls back to shm
# without a word; ALLOCINFO_STORE=bpf says why in one "allocinfo:" line and uses shm.
. "$top_srcdir/tests/integration/bpf_lib.sh"
bpf_require
command -v setpriv >/dev/null || skip "no setpriv"
id nobody >/dev/null 2>&1 || skip "no user nobody"

# A store directory and report directory that nobody may write to.
chmod 755 "$work"
mkdir -m 1777 "$work/u" "$work/store"
as_nobody="setpriv --reuid=nobody --regid=$(id -g nobody) --clear-groups"
run=$prog
if ! $as_nobody test -x "$prog"; then
	# The build tree is closed to other users: a copy of the program and library.
	mkdir -m 755 "$work/bin"
	cp "$prog" "$work/bin/"
	cp -L "$top_builddir/lib/.libs/liballocinfo.so.0" "$work/bin/" 2>/dev/null
	chmod -R a+rX "$work/bin"
	run=$work/bin/bpf_prog
	export LD_LIBRARY_PATH="$work/bin${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi

# unpriv NAME [VAR=VALUE...]: as start, but as nobody, with ALLOCINFO_STORE unset
# unless given.
unpriv() {
	name=$1
	shift
	env -u ALLOCINFO_STORE ALLOCINFO_STORE_DIR="$work/store" "$@" \
		$as_nobody "$run" wait "$work/u/$name" 2>"$work/$name.err" &
	pid=$!
	pids="$pids $pid"
	wait_file "$work/u/$name"
}

for store in auto bpf; do
	if [ "$store" = auto ]; then
		unpriv auto
	else
		unpriv bpf ALLOCINFO_STORE=bpf
	fi
	[ -f "$work/store/allocinfo-$pid" ] || fail "ALLOCINFO_STORE=$store as nobody: no shm store"
	[ ! -e "$pins/$pid" ] || fail "ALLOCINFO_STORE=$store as nobody: pins $pins/$pid"
	expect_subject_rows "$work/u/$store"
	finish "$pid"
done

[ ! -s "$work/auto.err" ] || fail "ALLOCINFO_STORE=auto as nobody said: $(cat "$work/auto.err")"
printf '%s\n' "allocinfo: ALLOCINFO_STORE=bpf: cannot create BPF maps (Operation not permitted); using shm" >"$work/expected.err"
cmp -s "$work/bpf.err" "$work/expected.err" ||
	fail "ALLOCINFO_STORE=bpf as nobody said: $(cat "$work/bpf.err")"
exit 0
