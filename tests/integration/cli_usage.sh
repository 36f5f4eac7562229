#!/bin/sh
# SPDX-License-Identifier: MIT
# allocinfo's command line: --help and --version, and every bad value or bad
# combination refused with a message naming the option and exit status 2.
. "$top_srcdir/tests/integration/cli_lib.sh"

allocinfo --help > "$tmp/out" 2> "$tmp/err" || fail "--help"
[ -s "$tmp/err" ] && fail "--help writes to stderr"
for opt in -p --sort --top --human --json --prometheus --pprof --save --diff --watch \
	   --gc --enable --disable --version; do
	grep -q -e "$opt" "$tmp/out" || fail "--help does not mention $opt"
done
allocinfo -h | cmp -s - "$tmp/out" || fail "-h differs from --help"
allocinfo --version > "$tmp/out" || fail "--version"
grep -qE '^allocinfo [0-9]+\.[0-9]+' "$tmp/out" || fail "--version: $(cat "$tmp/out")"

# usage MESSAGE ARGS...: allocinfo ARGS exits with 2, saying MESSAGE and a hint.
usage() {
	msg=$1
	shift
	allocinfo "$@" > "$tmp/out" 2> "$tmp/err"
	rc=$?
	[ $rc -eq 2 ] || fail "allocinfo $*: exit status $rc, not 2"
	[ -s "$tmp/out" ] && fail "allocinfo $*: output on stdout"
	[ "$(head -n 1 "$tmp/err")" = "allocinfo: $msg" ] ||
		fail "allocinfo $*: message '$(head -n 1 "$tmp/err")', not 'allocinfo: $msg'"
	[ "$(sed -n 2p "$tmp/err")" = "Try 'allocinfo --help' for more information." ] ||
		fail "allocinfo $*: no hint"
}

usage "-p: 'abc' is not a process id" -p abc
usage "-p: '0' is not a process id" -p 0
usage "-p: '-5' is not a process id" -p -5
usage "-p: '99999999999' is not a process id" -p 99999999999
usage "-p: give one process only" -p 1 -p 2
usage "option '-p' needs a value" -p
usage "option '--sort' needs a value" --sort
usage "--sort: 'size' is not one of bytes, calls, site" --sort size
usage "--top: '0' is not a positive number" --top 0
usage "--top: 'x' is not a positive number" --top x
usage "--top: '-1' is not a positive number" --top=-1
usage "--watch: '0' is not a number of seconds from 0.1 to 86400" --watch 0
usage "--watch: '1e9' is not a number of seconds from 0.1 to 86400" --watch 1e9
usage "--watch: 'nan' is not a number of seconds from 0.1 to 86400" --watch nan
usage "--count: '0' is not a positive number" --watch 1 --count 0
usage "--count needs --watch" --count 3
usage "--pprof: the file name is empty" --pprof ""
usage "choose one of --json, --prometheus, --pprof, --save, --diff" --json --prometheus
usage "choose one of --json, --prometheus, --pprof, --save, --diff" --save a --diff b
usage "--human applies to the text report and --diff only" --json --human
usage "--save keeps every site: --sort and --top do not apply" --save x --top 3
usage "--watch does not repeat --pprof or --save" --watch 1 --pprof x
usage "--gc takes no other option" --gc --json
usage "--gc takes no other option" --gc -p 1
usage "--enable needs -p PID" --enable
usage "--disable takes no other option than -p" -p 1 --disable --top 1
usage "unknown option '--bogus'" --bogus
usage "unknown option '-x'" -x
usage "unexpected argument 'extra'" extra
usage "option '--json' takes no value" --json=1
echo "ok"
