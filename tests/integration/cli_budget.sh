#!/bin/sh
# SPDX-License-Identifier: MIT
# A slow store costs only its own lines. A forged store of 30,000 caller tags
# spread over 100 large ELF objects (more than the symbolizer keeps open, so that
# every lookup loads an object again) would take long to name: allocinfo spends
# its naming budget on it (2 s), shows the rest unnamed, says so in one line, and
# reports the real process exactly, all within a few seconds.
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
		-type f -size +2M 2>/dev/null | sort); do
	[ "$(head -c 4 "$m" | tr -d '\0')" = "$(printf '\177ELF')" ] || continue
	mods="$mods $m"
	n=$((n + 1))
	[ $n -lt 100 ] || break
done
[ $n = 100 ] || { echo "SKIP: fewer than 100 ELF objects of 2 MB"; exit 77; }
"$progs/cli_forge" callers "$store_dir/allocinfo-$p" "$p" 30000 $mods || exit 99

start_ns=$(date +%s%N)
timeout 60 allocinfo > "$tmp/all" 2> "$tmp/err"
rc=$?
ms=$((($(date +%s%N) - start_ns) / 1000000))
[ $rc -eq 0 ] || fail "allocinfo exited with $rc after $ms ms"
[ $ms -lt 10000 ] || fail "allocinfo took $ms ms"
grep -Eqx "allocinfo: $store_dir/allocinfo-$p: naming its caller tags took over 2000 ms: [0-9]+ shown unnamed" \
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
# Every forged tag is there, named or not: 1 byte each, 30000 in all.
total=$(for m in $mods; do echo "[${m##*/}]"; done | awk '
	NR == FNR { forged[$0] = 1; next }
	FNR > 2 && ($4 in forged) { b += $1; c += $2 } END { print b + 0, c + 0 }' - "$tmp/all")
[ "$total" = "30000 30000" ] || fail "forged tags: $total"
echo "ok ($ms ms)"
