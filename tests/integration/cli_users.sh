#!/bin/sh
# SPDX-License-Identifier: MIT
# No store may lower or fake another process's figures. root runs a program whose
# caller tag reads "3000 2 ??:0 [prog] func:hold"; nobody forges stores for
# processes of its own with a tag of the same name: one with bytes -3000 and calls
# -2, one with 5000 bytes in 1 call. The combined report keeps root's line as it
# is, shows nobody's lines apart with " user:nobody" (the negative one as 0), and
# names the store with negative counts on stderr.
. "$top_srcdir/tests/integration/nobody_lib.sh"

build_prog "$W/bin/prog"
run_root_prog "$W/bin/prog"
root_pid=$PID
nobody_sleeps
neg=$PID
forge site "$W/store/allocinfo-$neg" "$neg" /opt/prog "??" 0 hold -3000 -2
nobody_sleeps
pos=$PID
forge site "$W/store/allocinfo-$pos" "$pos" /opt/prog "??" 0 hold 5000 1

{
	row 3000 2 "??:0" prog hold
	row 5000 1 "??:0" prog hold user:nobody
} > "$W/want"
for args in "" "-p $root_pid"; do
	timeout 20 "$ALLOCINFO" $args > "$W/out" 2> "$W/err" || fail "allocinfo $args"
	grep -F '[prog]' "$W/out" > "$W/got"
	if [ -n "$args" ]; then
		row 3000 2 "??:0" prog hold > "$W/want1"
		cmp -s "$W/want1" "$W/got" || fail "allocinfo $args: $(cat "$W/got")"
		[ ! -s "$W/err" ] || fail "allocinfo $args said: $(cat "$W/err")"
		continue
	fi
	cmp -s "$W/want" "$W/got" || fail "allocinfo: $(cat "$W/got")"
	echo "allocinfo: $W/store/allocinfo-$neg: 1 tag with counts below zero, shown as 0" > "$W/want_err"
	cmp -s "$W/want_err" "$W/err" || fail "allocinfo said: $(cat "$W/err")"
done
# Every format keeps the users apart.
timeout 20 "$ALLOCINFO" --json > "$W/out" 2>/dev/null || fail "--json"
grep -F '"module":"prog"' "$W/out" | grep -c '"user":"nobody"' | grep -qx 1 || fail "--json: $(cat "$W/out")"
grep -F '"module":"prog","file":"??","line":0,"func":"hold","bytes":3000,"calls":2,"unloaded":false,"accurate":true}' \
	"$W/out" > /dev/null || fail "--json: root's line: $(cat "$W/out")"
timeout 20 "$ALLOCINFO" --prometheus > "$W/out" 2>/dev/null || fail "--prometheus"
grep -F "allocinfo_live_bytes{module=\"prog\",file=\"??\",line=\"0\",func=\"hold\",user=\"nobody\",pid=\"$pos\",comm=\"sleep\"} 5000" \
	"$W/out" > /dev/null || fail "--prometheus: $(grep prog "$W/out")"
timeout 20 "$ALLOCINFO" --save "$W/snap" 2>/dev/null || fail "--save"
grep -q "$(printf 'site\t5000\t1\tprog\t??\t0\thold\t0\tnobody')" "$W/snap" || fail "--save: $(cat "$W/snap")"
timeout 20 "$ALLOCINFO" --diff "$W/snap" > "$W/out" 2>/dev/null || fail "--diff"
[ "$(sed 1,2d "$W/out" | grep -c .)" = 0 ] || fail "--diff: $(cat "$W/out")"
echo ok
