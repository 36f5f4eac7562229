#!/bin/sh
# SPDX-License-Identifier: MIT
# A user's caller tags are named only from files that user could read. root's
# execute-only program (mode 0711), run by nobody, is shown by address, not by its
# function names; so is a program whose separate debug file nobody may not read.
# The same programs run by root, and a readable copy run by nobody, are named.
. "$top_srcdir/tests/integration/nobody_lib.sh"

# hold()'s range in PROG, from its symbol table: "START END" in hex.
hold_range() {
	set -- $(nm -S "$1" | awk '$4 == "hold" { print $1, $2 }')
	echo $((0x$1)) $((0x$1 + 0x$2))
}
# check_unnamed PROG OUT: OUT has PROG's line with an address inside hold().
check_unnamed() {
	line=$(grep -F "[${1##*/}]" "$2")
	echo "$line" | grep -Eqx ' +3000 +2 \?\?:0 \['"${1##*/}"'\] func:0x[0-9a-f]+ user:nobody ' ||
		fail "${1##*/}: $line"
	addr=$(echo "$line" | sed 's/.*func:0x\([0-9a-f]*\) .*/\1/')
	set -- $(hold_range "$1")
	[ "$((0x$addr))" -gt "$1" ] && [ "$((0x$addr))" -le "$2" ] ||
		fail "0x$addr is not a return address in hold()"
}
command -v nm >/dev/null || skip "no nm"

# 1. Execute-only, and a readable copy.
build_prog "$W/bin/prog_xo"
chown root "$W/bin/prog_xo" && chmod 0711 "$W/bin/prog_xo"
cp "$W/bin/prog_xo" "$W/bin/prog_r" && chmod 0755 "$W/bin/prog_r"
as_nobody cat "$W/bin/prog_xo" > /dev/null 2>&1 && fail "nobody can read prog_xo"
run_prog "$W/bin/prog_xo"
xo=$PID
run_prog "$W/bin/prog_r"
for args in "-p $xo" ""; do
	timeout 20 "$ALLOCINFO" $args > "$W/out" 2> "$W/err" || fail "allocinfo $args"
	check_unnamed "$W/bin/prog_xo" "$W/out"
done
row 3000 2 "??:0" prog_r hold user:nobody > "$W/want"
grep -F "[prog_r]" "$W/out" | cmp -s "$W/want" - || fail "prog_r: $(grep -F '[prog_r]' "$W/out")"
run_root_prog "$W/bin/prog_xo"
timeout 20 "$ALLOCINFO" -p "$PID" | grep -F "[prog_xo]" > "$W/got"
row 3000 2 "??:0" prog_xo hold | cmp -s - "$W/got" || fail "root's prog_xo: $(cat "$W/got")"

# 2. Readable, with a separate debug file only root may read.
build_prog "$W/bin/prog_dbg" -g
objcopy --only-keep-debug "$W/bin/prog_dbg" "$W/bin/prog_dbg.debug" &&
	objcopy --strip-debug --add-gnu-debuglink="$W/bin/prog_dbg.debug" "$W/bin/prog_dbg" || exit 99
chown root "$W/bin/prog_dbg.debug" "$W/bin/prog_dbg" && chmod 0600 "$W/bin/prog_dbg.debug" &&
	chmod 0755 "$W/bin/prog_dbg" || exit 99
line=$(grep -n 'void \*p = malloc(n);' "$top_srcdir/tests/integration/nobody_prog.c" | cut -d: -f1)
run_root_prog "$W/bin/prog_dbg"
timeout 20 "$ALLOCINFO" -p "$PID" | grep -F "[prog_dbg]" > "$W/got"
grep -Eqx " +3000 +2 [^ ]*nobody_prog.c:$line \[prog_dbg\] func:hold " "$W/got" ||
	fail "root's prog_dbg: $(cat "$W/got")"
run_prog "$W/bin/prog_dbg"
timeout 20 "$ALLOCINFO" -p "$PID" > "$W/out" || fail "allocinfo -p $PID"
check_unnamed "$W/bin/prog_dbg" "$W/out"
echo ok
