#!/bin/sh
# SPDX-License-Identifier: MIT
# A slow store costs only its own lines. A forged store of 65,000 caller tags
# spread over 100 large ELF objects (more than the symbolizer keeps open, so that
# every lookup loads an object again) takes long to name: allocinfo spends its
# naming budget on it (lowered to 200 ms here, as naming is faster than the default
# budget on a fast machine), shows the rest unnamed, says so in one line, and
# reports the real process exactly, all within a few seconds of CPU time. A
# malformed budget gets one line and the default. The symbol cache is a fresh one:
# names cached by an earlier run would cost nothing.
. "$top_srcdir/tests/integration/cli_lib.sh"

start a cli_prog 3
f=$a_file
sleep 60 &
p=$!
bg_pids="$bg_pids $p"
until [ "$(readlink /proc/$p/exe)" = "$(command -v sleep | xargs readlink -f)" ]; do sleep 0.01; done

mods=
n=0
for m in $(find /usr/lib/x86_64-linux-gnu /usr/lib /usr/bin /usr/libexec -maxdepth 2 \
		-type f -size +2M 2>/dev/null | xargs -r readlink -f | sort -u); do
	[ "$(head -c 4 "$m" | tr -d '\0')" = "$(printf '\177ELF')" ] || continue
	mods="$mods $m"
	n=$((n + 1))
	[ $n -lt 100 ] || break
done
[ $n = 100 ] || { echo "SKIP: fewer than 100 ELF objects of 2 MB"; exit 77; }
"$progs/cli_forge" callers "$store_dir/allocinfo-$p" "$p" 65000 $mods || exit 99

# The CPU time of this shell's children so far, in ms (the second line of `times`,
# which must run in this shell, not in a subshell).
children_ms() {
	awk 'NR == 2 {
		t = 0
		for (i = 1; i <= 2; i++) { split($i, a, "m"); t += a[1] * 60 + a[2] }
		printf "%d\n", t * 1000 }' "$1"
}
times > "$tmp/times.before"
XDG_CACHE_HOME="$tmp/cache" ALLOCINFO_NAMING_BUDGET_MS=200 timeout 60 allocinfo > "$tmp/all" 2> "$tmp/err"
rc=$?
times > "$tmp/times.after"
ms=$(($(children_ms "$tmp/times.after") - $(children_ms "$tmp/times.before")))
[ $rc -eq 0 ] || fail "allocinfo exited with $rc after $ms ms of CPU"
# Reading and printing the store add little to the budget.
[ $ms -lt 5000 ] || fail "allocinfo took $ms ms of CPU"
grep -Eqx "allocinfo: $store_dir/allocinfo-$p: naming its caller tags took over 200 ms: [0-9]+ shown unnamed" \
	"$tmp/err" || fail "stderr: $(cat "$tmp/err")"
[ "$(wc -l < "$tmp/err")" = 1 ] || fail "stderr: $(cat "$tmp/err")"
grep ' \[cli_prog\] ' "$tmp/all" > "$tmp/got"
{
	row 300 3 "$f" $LINE_MALLOC cli_prog initial
	row 1024 1 "$f" $LINE_CALLOC cli_prog initial
	row 6 1 "$f" $LINE_STRDUP cli_prog initial
	row 0 0 "$f" $LINE_GROW cli_prog grow
} > "$tmp/want"
same "$tmp/want" "$tmp/got"
# Every forged tag is there, named or not: 1 byte each, 65000 in all.
total=$(for m in $mods; do echo "[${m##*/}]"; done | awk '
	NR == FNR { forged[$0] = 1; next }
	FNR > 2 && ($4 in forged) { b += $1; c += $2 } END { print b + 0, c + 0 }' - "$tmp/all")
[ "$total" = "65000 65000" ] || fail "forged tags: $total"
ALLOCINFO_NAMING_BUDGET_MS=2s allocinfo -p "$a_pid" > /dev/null 2> "$tmp/err" ||
	fail "a malformed budget stopped allocinfo"
[ "$(cat "$tmp/err")" = "allocinfo: ALLOCINFO_NAMING_BUDGET_MS='2s' is not a number of milliseconds from 1 to 3600000; using 2000" ] ||
	fail "malformed budget: $(cat "$tmp/err")"
echo "ok ($ms ms of CPU)"
