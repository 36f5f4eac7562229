# SPDX-License-Identifier: MIT
# Sourced by the BPF store tests: the skip rules, the subject program (bpf_prog.c),
# and comparing reports. Needs top_builddir and ALLOCINFO_STORE_DIR (tests/run-test.sh).

prog=$top_builddir/tests/integration/bpf_prog
pins=/sys/fs/bpf/allocinfo
PATH=$PATH:/usr/sbin:/sbin
work=$(mktemp -d "${TMPDIR:-/tmp}/allocinfo-bpf.XXXXXX") || exit 99
pids=""

cleanup() {
	for p in $pids; do
		pkill -KILL -P "$p" 2>/dev/null	# a forked child, known or not
		kill -CONT "$p" 2>/dev/null
		kill -KILL "$p" 2>/dev/null
	done
	wait 2>/dev/null
	for p in $pids; do
		rm -rf "${pins:?}/$p"
	done
	rm -rf "$work"
}
trap cleanup EXIT

skip() {
	echo "SKIP: $*"
	exit 77
}

fail() {
	echo "FAIL: $*"
	exit 1
}

# Root, bpffs, bpftool, a build with BPF support, and the right to create maps.
bpf_require() {
	[ "$(id -u)" = 0 ] || skip "needs root"
	[ "$(stat -f -c %T /sys/fs/bpf 2>/dev/null)" = bpf_fs ] ||
		skip "no BPF file system mounted at /sys/fs/bpf"
	command -v bpftool >/dev/null || skip "no bpftool"
	ALLOCINFO_STORE=bpf "$prog" once "$work/probe" 2>"$work/probe.err" ||
		fail "bpf_prog: $(cat "$work/probe.err")"
	if grep -q 'no BPF support' "$work/probe.err"; then
		skip "built without BPF support"
	fi
	if grep -q 'cannot create BPF maps' "$work/probe.err"; then
		skip "$(cat "$work/probe.err")"
	fi
	[ ! -s "$work/probe.err" ] || fail "bpf_prog said: $(cat "$work/probe.err")"
}

wait_file() {
	n=0
	while [ ! -f "$1" ]; do
		n=$((n + 1))
		[ "$n" -lt 400 ] || fail "$1 did not appear"
		sleep 0.05
	done
}

# wait_pins PID: waits up to 10 s for PID's report iterator: a process makes its
# maps a few milliseconds after it starts (in a thread of the library's), and a
# forked child at its first allocation. Returns 1 if it did not appear.
wait_pins() {
	n=0
	while [ ! -e "$pins/$1/allocinfo" ]; do
		n=$((n + 1))
		[ "$n" -lt 200 ] || return 1
		sleep 0.05
	done
}

# start MODE NAME [VAR=VALUE...]: runs bpf_prog MODE $work/NAME in the background
# with that environment and sets $pid once its report is complete and, when it asked
# for the BPF store and said nothing, once its maps are pinned.
start() {
	mode=$1
	name=$2
	shift 2
	env "$@" "$prog" "$mode" "$work/$name" 2>"$work/$name.err" &
	pid=$!
	pids="$pids $pid"
	wait_file "$work/$name"
	case " $* " in
	*" ALLOCINFO_STORE=bpf "*)
		[ -s "$work/$name.err" ] || wait_pins "$pid" ||
			fail "no report iterator for $pid: $(cat "$work/$name.err")" ;;
	esac
}

# finish PID: lets a waiting bpf_prog return from main, and checks it did.
finish() {
	kill -CONT "$1" 2>/dev/null
	kill -USR1 "$1" || fail "process $1 is gone"
	wait "$1" || fail "process $1 exited with status $?"
}

# rows FILE: the rows of a report (after its two header lines), sorted.
rows() {
	tail -n +3 "$1" | LC_ALL=C sort
}

# same_rows A B: reports A (rendered from the BPF maps) and B (by a reader) have the
# same header and the same rows, except that A names dynamic tags by address,
# "??:0 [module] func:0xADDR", where B may show the file:line and function that
# debug info gives: such rows must then agree in bytes, calls and module.
same_rows() {
	head -n 2 "$1" >"$work/head_a"
	head -n 2 "$2" >"$work/head_b"
	cmp -s "$work/head_a" "$work/head_b" || {
		echo "headers differ:"
		diff "$work/head_a" "$work/head_b"
		return 1
	}
	rows "$1" >"$work/rows_a"
	rows "$2" >"$work/rows_b"
	LC_ALL=C comm -23 "$work/rows_a" "$work/rows_b" >"$work/only_a"
	LC_ALL=C comm -13 "$work/rows_a" "$work/rows_b" >"$work/only_b"
	awk '{ print $1, $2, $4 }' "$work/only_a" | LC_ALL=C sort >"$work/key_a"
	awk '{ print $1, $2, $4 }' "$work/only_b" | LC_ALL=C sort >"$work/key_b"
	if grep -v -E '^ *[0-9]+ +[0-9]+ \?\?:0 \[[^]]*\] func:0x[0-9a-f]+ $' "$work/only_a" |
		grep -q . || ! cmp -s "$work/key_a" "$work/key_b"; then
		echo "rows only in $1:"
		cat "$work/only_a"
		echo "rows only in $2:"
		cat "$work/only_b"
		return 1
	fi
}

# expect_row FILE BYTES CALLS LINE [TOKENS]: FILE has the row of bpf_prog.c:LINE,
# exactly, ending with TOKENS when given (" user:nobody").
expect_row() {
	row=$(printf '%12s %8s ' "$2" "$3")
	grep -q -x -E "$row[^ ]*bpf_prog\.c:$4 \[bpf_prog\] func:main${5:-} " "$1" ||
		fail "$1 has no row \"$row...bpf_prog.c:$4 [bpf_prog] func:main\""
}

# The rows bpf_prog.c makes (its pinned lines), in report FILE.
expect_subject_rows() {
	expect_row "$1" 100 1 69
	expect_row "$1" 120 3 71
	expect_row "$1" 10 1 73
	expect_row "$1" 0 0 74
}
