#!/bin/sh
# SPDX-License-Identifier: MIT
# Corrupt, truncated, oversized and hostile stores in the store directory, each named
# for a live process: allocinfo names every one of them on stderr, in one line, and
# still reports the good process, quickly, with exit status 0. A valid store with
# hostile names cannot add a token or a line to the report.
. "$top_srcdir/tests/integration/cli_lib.sh"

start a cli_prog 3
f=$a_file

# A live process for each store to claim, once it runs sleep: a store forged while
# the child is still the shell would name the shell's executable, and a reader drops
# a store whose executable is not the process's.
live() {
	sleep 60 &
	bg_pids="$bg_pids $!"
	eval "$1=$!"
	n=0
	until [ "$(readlink /proc/$!/exe)" = "$(command -v sleep | xargs readlink -f)" ]; do
		n=$((n + 1))
		[ $n -lt 500 ] || exit 99
		sleep 0.01
	done
}
forge() {	# KIND VAR
	live "$2"
	eval "\"\$progs/cli_forge\" $1 \"\$store_dir/allocinfo-\$$2\" \"\$$2\"" || exit 99
}
: > "$tmp/want_err"
expect() {	# VAR WHY
	eval "echo \"allocinfo: \$store_dir/allocinfo-\$$1: $2\"" >> "$tmp/want_err"
}

forge truncated p1;   expect p1 "truncated header"
forge badmagic p2;    expect p2 "bad magic"
forge hugetags p3;    expect p3 "implausible sizes"
forge badstrings p4;  expect p4 "string offsets out of bounds"
forge nonul p5;       expect p5 "string offsets out of bounds"
forge badversion p6;  expect p6 "unsupported version 99"
forge hugecpus p7;    expect p7 "implausible sizes"
forge regions p8;     expect p8 "regions out of bounds"
forge short p9;       expect p9 "regions out of bounds"
forge claims p10;     expect p10 "claims pid 1"
forge badstate p11;   expect p11 "unknown state 77"
live p12; mkfifo "$store_dir/allocinfo-$p12";               expect p12 "a FIFO, not a store"
live p13; ln -s "allocinfo-$a_pid" "$store_dir/allocinfo-$p13"; expect p13 "a symbolic link, not a store"
live p14; mkdir "$store_dir/allocinfo-$p14";                expect p14 "a directory, not a store"
live p15; head -c 65536 /dev/urandom > "$store_dir/allocinfo-$p15"; expect p15 "bad magic"
live p16; truncate -s 3G "$store_dir/allocinfo-$p16" || exit 99
expect p16 "too large (3221225472 bytes)"
if [ "$(id -u)" = 0 ]; then
	# A store that someone other than the process's owner wrote for it.
	forge good p17
	chown 65534 "$store_dir/allocinfo-$p17" || exit 99
	expect p17 "owned by uid 65534, but process $p17 runs as uid 0"
	live p18; mknod "$store_dir/allocinfo-$p18" c 1 5 && expect p18 "a device, not a store"
fi
# Valid, with hostile names.
forge good good
# Names that are not stores are not even opened.
mkfifo "$store_dir/allocinfo-0$a_pid" "$store_dir/allocinfo-${a_pid}x" \
	"$store_dir/allocinfo-" "$store_dir/allocinfo-99999999999" "$store_dir/other-$a_pid"

timeout 30 allocinfo > "$tmp/all" 2> "$tmp/err"
rc=$?
[ $rc -eq 0 ] || { cat "$tmp/err"; fail "allocinfo exited with $rc"; }
sort "$tmp/want_err" > "$tmp/want"
sort "$tmp/err" > "$tmp/got"
same "$tmp/want" "$tmp/got"
grep -e ' \[cli_prog\] ' -e ' \[forged.so\] ' "$tmp/all" > "$tmp/got"
{
	row 300 3 "$f" $LINE_MALLOC cli_prog initial
	row 1024 1 "$f" $LINE_CALLOC cli_prog initial
	row 6 1 "$f" $LINE_STRDUP cli_prog initial
	row 0 0 "$f" $LINE_GROW cli_prog grow
	row 3 1 evil_name.c 1 forged.so func_x_1_y
	row 4096 2 forged.c 7 forged.so forged
} > "$tmp/want"
same "$tmp/want" "$tmp/got"
sed 1,2d "$tmp/all" | grep -v -E '^ {0,11}[0-9]+ +[0-9]+ [^ ]+:[0-9]+( \[[^] ]+\])? func:[^ ]+ $' &&
	fail "lines above do not parse"

# Every other output survives them too.
for opt in --json --prometheus "--pprof $tmp/p.pb.gz" "--save $tmp/s" "--diff $tmp/s" \
	   "--sort bytes --human"; do
	timeout 30 allocinfo $opt > /dev/null 2> "$tmp/err"
	rc=$?
	[ $rc -eq 0 ] || fail "allocinfo $opt exited with $rc"
	sort "$tmp/err" > "$tmp/got"
	sort "$tmp/want_err" > "$tmp/want"
	same "$tmp/want" "$tmp/got"
done

# -p of a bad store: that store's reason, exit status 1.
for v in p1 p3 p12 p16; do
	p=$(eval echo \$$v)
	timeout 30 allocinfo -p "$p" > /dev/null 2> "$tmp/err"
	rc=$?
	[ $rc -eq 1 ] || fail "-p $p exited with $rc"
	grep -xF "$(grep -F "allocinfo-$p:" "$tmp/want_err")" "$tmp/err" > /dev/null ||
		fail "-p $p: $(cat "$tmp/err")"
done
timeout 30 allocinfo -p "$p12" --disable > /dev/null 2>&1
[ $? -eq 1 ] || fail "--disable of a FIFO"

# --gc leaves stores of live processes alone, bad or not, and names the bad ones.
timeout 30 allocinfo --gc > "$tmp/gc" 2> "$tmp/err" || fail "--gc"
grep -v '^removed /sys/fs/bpf/' "$tmp/gc" && fail "--gc removed the lines above"
grep -v '^allocinfo: /sys/fs/bpf/' "$tmp/err" | sort > "$tmp/got"
same "$tmp/want" "$tmp/got"
[ -p "$store_dir/allocinfo-$p12" ] && [ -d "$store_dir/allocinfo-$p14" ] || fail "--gc removed"
echo "ok"
