#!/bin/sh
# SPDX-License-Identifier: MIT
# /sys/fs/bpf/allocinfo is root's, 0755: a directory left writable by everyone (as
# older versions made it, 1777) is made 0755 by the first BPF store; entries another user made there beforehand for the pids to come
# (<pid>/sub) cannot move a root process to the shm store; afterwards that user
# cannot make any.
. "$top_srcdir/tests/integration/process_lib.sh"
[ "$(id -u)" = 0 ] || skip "needs root"
id nobody >/dev/null 2>&1 || skip "no user nobody"
command -v su >/dev/null || skip "no su"
[ "$(stat -f -c %T /sys/fs/bpf 2>/dev/null)" = bpf_fs ] || skip "no BPF file system at /sys/fs/bpf"
unset ALLOCINFO_STORE_DIR
dir=/sys/fs/bpf/allocinfo
probe=$(ALLOCINFO_STORE=bpf "$prog" fds 2>&1 >/dev/null)
case $probe in
*"no BPF support"* | *"cannot create BPF maps"*) skip "$probe" ;;
esac

# The old layout, and nobody's entries for the next pids.
mkdir -p "$dir"
chown root:root "$dir"
chmod 1777 "$dir"
first=$(($(cat /proc/sys/kernel/ns_last_pid) + 1))
last=$((first + 1500))
# A few processes for all of them, so that the pids to come stay in the range
# (some pids may be live processes' already).
su -s /bin/sh nobody -c "cd '$dir' && seq $first $last | sed 's|\$|/sub|' |
	xargs mkdir -p 2>/dev/null"
[ "$(stat -c %U "$dir/$last/sub" 2>/dev/null)" = nobody ] ||
	fail "nobody could not make entries in a 1777 $dir"
cleanup_entries() {	# one find: a stat per pid took seconds
	find "${dir:?}" -mindepth 1 -maxdepth 1 -user nobody 2>/dev/null |
		awk -F/ -v a="$first" -v b="$last" '$NF ~ /^[0-9]+$/ && $NF >= a && $NF <= b' |
		xargs -r rm -rf
}
trap 'cleanup_entries; cleanup' EXIT

mkfifo "$work/go"
ALLOCINFO_STORE=bpf "$prog" hold "$work/go" >"$work/out" 2>"$work/err" &
pids="$pids $!"
wait_nonempty "$work/out"
held=$(cat "$work/out")
n=0	# the maps are made a few milliseconds after the start
until [ -e "$dir/$held/counters" ]; do
	n=$((n + 1))
	[ $n -lt 200 ] || fail "process $held has no BPF pins: $(cat "$work/err")"
	sleep 0.05
done
[ "$held" -ge "$first" ] && [ "$held" -le "$last" ] ||
	echo "note: pid $held was outside the pre-made entries $first-$last"
[ "$(stat -c '%a %U' "$dir")" = "755 root" ] ||
	fail "$dir is $(stat -c '%a %U' "$dir") after a BPF store started"
[ ! -s "$work/err" ] || fail "the BPF store said: $(cat "$work/err")"
! su -s /bin/sh nobody -c "mkdir '$dir/nobody-was-here'" 2>/dev/null ||
	fail "nobody can still make entries in $dir"
: >"$work/go"
wait "$!" || fail "process_prog hold failed: $(cat "$work/err")"
[ ! -e "$dir/$held" ] || fail "pins of $held left after its exit"
exit 0
