# SPDX-License-Identifier: MIT
# Sourced by the cli_*.sh tests: starts the instrumented test programs, sends them
# commands and waits for their answers, and builds the report lines they expect.
#
#   start NAME PROG FD   runs PROG (cli_prog or cli_other) with its commands on file
#                        descriptor FD (3 to 9); sets NAME_pid and NAME_file
#   send NAME FD CMD     sends CMD and waits for its acknowledgement
#   row BYTES CALLS FILE LINE MODULE FUNC
#                        one report line, as the kernel's format prints it
#   report FILE...       the header and the rows of the given files, in order
#   ours                 reads a report on stdin, keeps the header and the lines of
#                        the test programs (the C++ runtime allocates at start-up too)
#   same EXPECTED ACTUAL fails with a diff unless the two files are equal
set -u
: "${top_builddir:?}" "${ALLOCINFO_STORE_DIR:?run through tests/run-test.sh}"

progs=$top_builddir/tests/integration
store_dir=$ALLOCINFO_STORE_DIR
tmp=$(mktemp -d "${TMPDIR:-/tmp}/allocinfo-cli.XXXXXX") || exit 99
bg_pids=""

cleanup() {
	for p in $bg_pids; do
		kill -9 "$p" 2>/dev/null
	done
	wait 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

fail() {
	echo "FAIL: $*"
	exit 1
}

# wait_for FILE REGEX [N]: until FILE has N lines (default 1) matching REGEX; 10 s at most.
wait_for() {
	n=0
	while c=$(grep -c -e "$2" "$1" 2>/dev/null); [ "${c:-0}" -lt "${3:-1}" ]; do
		n=$((n + 1))
		[ $n -lt 400 ] || return 1
		sleep 0.025
	done
}

start() {
	mkfifo "$tmp/$1.in" || exit 99
	"$progs/$2" < "$tmp/$1.in" > "$tmp/$1.out" &
	bg_pids="$bg_pids $!"
	eval "exec $3>\"\$tmp/\$1.in\""
	wait_for "$tmp/$1.out" '^file ' || fail "$2 did not start"
	eval "$1_pid=\$(sed -n 's/^ready //p' \"\$tmp/\$1.out\")"
	eval "$1_file=\$(sed -n 's/^file //p' \"\$tmp/\$1.out\")"
	[ -e "$store_dir/allocinfo-$(eval echo \$$1_pid)" ] || fail "$2 published no store"
}

send() {
	acks=$(grep -c "^ok $3\$" "$tmp/$1.out")
	echo "$3" >&"$2"
	wait_for "$tmp/$1.out" "^ok $3\$" $((acks + 1)) || fail "$1 did not answer '$3'"
}

row() {
	printf '%12s %8s %s:%s [%s] func:%s \n' "$1" "$2" "$3" "$4" "$5" "$6"
}

header() {
	printf 'allocinfo - version: 2.0\n#     <size>  <calls> <tag info>\n'
}

ours() {
	grep -e '^allocinfo - version' -e '^#' -e ' \[cli_prog\] ' -e ' \[cli_other\] '
}

same() {
	if ! cmp -s "$1" "$2"; then
		echo "FAIL: unexpected output; diff expected actual:"
		diff -u "$1" "$2"
		exit 1
	fi
}

# Lines of cli_prog.c, pinned there by _Static_assert.
LINE_MALLOC=54
LINE_CALLOC=56
LINE_STRDUP=57
LINE_GROW=63
LINE_UNTAGGED=71
