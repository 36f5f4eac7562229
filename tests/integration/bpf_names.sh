#!/bin/sh
# SPDX-License-Identifier: MIT
# Who names a BPF store's caller tags for its report iterator: a reader writes the
# names it found into the tags map of its own user's processes only. A process of
# user nobody (with CAP_BPF and CAP_DAC_OVERRIDE, so that it has a BPF store): root's allocinfo -p names
# its caller tag in its own output but leaves the map alone; nobody's allocinfo -p
# writes the name, and the iterator then prints what allocinfo -p prints.
. "$top_srcdir/tests/integration/bpf_lib.sh"
bpf_require
command -v setpriv >/dev/null || skip "no setpriv"
id nobody >/dev/null 2>&1 || skip "no user nobody"

chmod 755 "$work"
mkdir -m 1777 "$work/u" "$work/store"
mkdir -m 755 "$work/bin"
cp "$prog" "$top_builddir/tools/allocinfo" "$work/bin/"
cp -L "$top_builddir/lib/.libs/liballocinfo.so.0" "$work/bin/" 2>/dev/null
chmod -R a+rX "$work/bin"
as_nobody="setpriv --reuid=nobody --regid=$(id -g nobody) --clear-groups"
export ALLOCINFO_STORE_DIR="$work/store" ALLOCINFO_SYMBOL_CACHE=0
# /sys/fs/bpf/allocinfo is root's, mode 0755: a process of another user pins there
# when it may write there (here CAP_DAC_OVERRIDE) and may create BPF maps.
rm -f "$work/u/r"
LD_LIBRARY_PATH="$work/bin${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" ALLOCINFO_STORE=bpf \
	$as_nobody --inh-caps=+bpf,+perfmon,+dac_override \
	--ambient-caps=+bpf,+perfmon,+dac_override \
	"$work/bin/bpf_prog" wait "$work/u/r" 2>"$work/r.err" &
pid=$!
pids="$pids $pid"
wait_file "$work/u/r"
wait_pins "$pid"
[ -d "$pins/$pid" ] || skip "no BPF store for a process with CAP_BPF: $(cat "$work/r.err")"
[ "$(stat -c %U "$pins/$pid")" = nobody ] || fail "$pins/$pid is not nobody's"
it=$pins/$pid/allocinfo
[ -e "$it" ] || skip "no report iterator for a process with CAP_BPF: $(cat "$work/r.err")"
unnamed='^ +48 +1 \?\?:0 \[bpf_prog\] func:0x[0-9a-f]+ $'

# root reads: names the tag for itself, writes nothing into nobody's map.
allocinfo -p "$pid" >"$work/root" || fail "allocinfo -p $pid as root"
expect_row "$work/root" 48 1 75 " user:nobody"
cat "$it" >"$work/iter1" || fail "cannot read $it"
grep -q -E "$unnamed" "$work/iter1" || { cat "$work/iter1"; fail "root wrote into nobody's tags map"; }

# nobody reads: the iterator prints its lines.
$as_nobody "$work/bin/allocinfo" -p "$pid" >"$work/own" 2>"$work/own.err" ||
	fail "allocinfo -p $pid as nobody: $(cat "$work/own.err")"
expect_row "$work/own" 48 1 75 " user:nobody"
cat "$it" >"$work/iter2" || fail "cannot read $it"
rows "$work/iter2" >"$work/rows_iter"
# The readers mark lines of a process not run by root (" user:nobody"); the
# process's own iterator speaks for it alone and prints no such token.
sed 's/ user:nobody $/ /' "$work/own" >"$work/own_lines"
rows "$work/own_lines" >"$work/rows_own"
cmp -s "$work/rows_iter" "$work/rows_own" || {
	diff "$work/rows_own" "$work/rows_iter"
	fail "the iterator's lines differ from those of nobody's allocinfo -p"
}
finish "$pid"
exit 0
