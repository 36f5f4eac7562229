#!/bin/sh
# SPDX-License-Identifier: MIT
# No reader blocks on a file that a store names. nobody's program, built without
# debug information, has a .gnu_debuglink naming a FIFO next to it (and a second
# one naming a symbolic link to a FIFO); run under LD_PRELOAD, its caller tags point
# at it. allocinfo -p and plain allocinfo finish at once and name the tags from
# the program's symbol table, without opening either FIFO.
. "$top_srcdir/tests/integration/nobody_lib.sh"

for kind in fifo link; do
	prog=$W/bin/prog_$kind
	build_prog "$prog"
	cp "$prog" "$prog.debug"	# any regular file: objcopy reads its CRC
	objcopy --add-gnu-debuglink="$prog.debug" "$prog" || exit 99
	rm "$prog.debug"
	if [ $kind = fifo ]; then
		mkfifo "$prog.debug"
	else
		mkfifo "$W/bin/elsewhere"
		ln -s "$W/bin/elsewhere" "$prog.debug"
	fi
	chown -h nobody "$prog.debug"
	run_prog "$prog"

	row 3000 2 "??:0" "prog_$kind" hold user:nobody > "$W/want"
	for args in "-p $PID" ""; do
		timeout 20 "$ALLOCINFO" $args > "$W/out" 2> "$W/err"
		rc=$?
		[ $rc -eq 0 ] || fail "allocinfo $args exited with $rc (124: it blocked)"
		grep -F "[prog_$kind]" "$W/out" > "$W/got"
		cmp -s "$W/want" "$W/got" || fail "allocinfo $args: $(cat "$W/got")"
		[ ! -s "$W/err" ] || fail "allocinfo $args said: $(cat "$W/err")"
	done
done
echo ok
