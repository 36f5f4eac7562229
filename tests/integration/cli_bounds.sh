#!/bin/sh
# SPDX-License-Identifier: MIT
# What one store may cost a reader is bounded (Documentation/security.md): a 2 GiB
# sparse store of 1,048,574 tags is refused (more than 65,536 tags), one whose
# counters in use come to 300 MiB is refused (more than 256 MiB), and one with the
# most tags (65,534, in 16 shards) is read; allocinfo --prometheus over the three
# stays within 512 MiB of address space and names the refused stores.
. "$top_srcdir/tests/integration/cli_lib.sh"

# limit_memory KB: ulimit -v, but for a sanitizer build (its shadow memory needs
# terabytes of address space).
limit_memory() {
	[ "${ALLOCINFO_SANITIZER:-no}" != no ] || ulimit -v "$1"
}

sleeper() {
	sleep 120 &
	bg_pids="$bg_pids $!"
	eval "$1=$!"
	until [ "$(readlink /proc/$!/exe)" = "$(command -v sleep | xargs readlink -f)" ]; do
		sleep 0.01
	done
}
sleeper huge;   "$progs/cli_forge" big "$store_dir/allocinfo-$huge" $huge 1048574 125 || exit 99
sleeper many;   "$progs/cli_forge" big "$store_dir/allocinfo-$many" $many 65534 300 || exit 99
sleeper edge;   "$progs/cli_forge" big "$store_dir/allocinfo-$edge" $edge 65534 16 || exit 99

( limit_memory 524288; exec timeout 120 allocinfo --prometheus ) > "$tmp/out" 2> "$tmp/err"
rc=$?
[ $rc -eq 0 ] || fail "allocinfo --prometheus exited with $rc: $(head -c 300 "$tmp/err")"
{
	echo "allocinfo: $store_dir/allocinfo-$huge: implausible sizes"
	echo "allocinfo: $store_dir/allocinfo-$many: too many counters to read (300 MiB, at most 256 MiB)"
} | sort > "$tmp/want"
sort "$tmp/err" > "$tmp/got"
same "$tmp/want" "$tmp/got"
n=$(grep -c "^allocinfo_live_bytes{module=\"big-$edge\",file=\"big.c\",line=\"[0-9]*\",func=\"big\",pid=\"$edge\",comm=\"sleep\"} 1\$" "$tmp/out")
[ "$n" = 65534 ] || fail "$n series of the store at the bounds"
echo ok
