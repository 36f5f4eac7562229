#!/bin/sh
# SPDX-License-Identifier: MIT
# The library's own memory in a counting process: the functions instrumented
# processes run come first in liballocinfo.so's code (lib/runtime/common-text.ld),
# so the kernel, which maps a file's pages 64 KiB at a time around each one touched,
# maps little more than them. A program built with the header that allocates,
# reallocates and frees from two threads must have none of the library's code
# resident past the 64 KiB windows those functions lie in, in most of five runs (all
# 192 KiB were, before). Every function of the library it runs must be one of them, natively
# (uprobes, as root) and under callgrind; a function that is not is named, for
# scripts/common-text.sh to add. The program runs a copy of the library of its own,
# which the probes count for it alone.
set -u
export LC_ALL=C
[ "${ALLOCINFO_SANITIZER:-no}" = no ] || { echo "skip: a sanitizer build"; exit 77; }
[ "${ALLOCINFO_COMMON_TEXT:-no}" = yes ] ||
	{ echo "skip: the linker did not take lib/runtime/common-text.ld"; exit 77; }
command -v gcc >/dev/null || { echo "skip: no gcc"; exit 77; }
. "$top_srcdir/scripts/function_hits.sh"
tmp=$(mktemp -d) || exit 99
trap 'hits_stop; rm -rf "$tmp"' EXIT
failed=0
fail() { echo "FAIL: $*"; failed=$((failed + 1)); }
script=$top_srcdir/lib/runtime/common-text.ld
mkdir "$tmp/lib" && cp "$top_builddir/lib/.libs/liballocinfo.so.0" "$tmp/lib/" &&
	ln -s liballocinfo.so.0 "$tmp/lib/liballocinfo.so" || exit 99
lib=$tmp/lib/liballocinfo.so.0
# In the page cache, as an installed library is once any process has used it.
cat "$lib" >/dev/null

cat >"$tmp/prog.c" <<'PROG'
#include <allocinfo.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void *work(void *arg)
{
	static void *blocks[2][1000];
	void **p = blocks[arg != NULL];
	for (int round = 0; round < 10; round++) {
		for (int i = 0; i < 1000; i++)
			p[i] = malloc(16 + i % 300);
		for (int i = 0; i < 1000; i++)
			p[i] = realloc(p[i], 400);
		for (int i = 0; i < 1000; i++)
			free(p[i]);
	}
	free(calloc(10, 10));
	return NULL;
}

/* Runs the work in two threads, then prints the resident KiB of the library's
 * executable mapping and its start address. */
int main(void)
{
	pthread_t t;
	if (pthread_create(&t, NULL, work, &t) != 0)
		return 1;
	work(NULL);
	pthread_join(t, NULL);
	FILE *f = fopen("/proc/self/smaps", "r");
	char line[512];
	int in = 0;
	unsigned long start = 0, end;
	char perms[8];
	long kb;
	while (f && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx-%lx %7s", &start, &end, perms) == 3)
			in = strstr(line, "/liballocinfo.so") && perms[2] == 'x';
		else if (in && sscanf(line, "Rss: %ld kB", &kb) == 1)
			break;
	}
	if (!in)
		return 2;
	printf("%ld %lx\n", kb, start);
	return 0;
}
PROG
gcc -O2 -g -I"$top_srcdir/include" -o "$tmp/prog" "$tmp/prog.c" \
	-L"$tmp/lib" -lallocinfo -lpthread -Wl,-rpath,"$tmp/lib" ||
	{ echo "FAIL: the program does not build"; exit 1; }

# The C runtime's and libc_nonshared's functions: placed by file, not by name.
printf '%s\n' atexit pthread_atfork __pthread_atfork _init _fini frame_dummy \
	register_tm_clones deregister_tm_clones __do_global_dtors_aux >"$tmp/runtime_stubs"

# The functions the script lists, as the library has them: name, start, size.
sed -n 's/^\t\t\*(\.text\.\([^ ]*\) \.text\.startup\.\1)$/\1/p' "$script" | sort -u >"$tmp/listed"
[ -s "$tmp/listed" ] || { echo "FAIL: $script lists no function"; exit 1; }
nm -S --defined-only "$lib" | awk '$3 ~ /^[tTwW]$/ { print $4, $1, $2 }' | sort -k1,1 >"$tmp/symbols"
join "$tmp/listed" "$tmp/symbols" >"$tmp/common"
missing=$(join -v1 "$tmp/listed" "$tmp/symbols" | wc -l)
[ "$missing" -gt $(($(wc -l <"$tmp/listed") / 10)) ] &&
	fail "$missing of the listed functions are not in the library: run scripts/common-text.sh"
# Where the listed functions end, in the library's addresses.
common_end=0
while read -r _name addr size; do
	[ $((0x$addr + 0x$size)) -le "$common_end" ] || common_end=$((0x$addr + 0x$size))
done <"$tmp/common"
# Then rseq's abort handlers and pthread_getattr_np(), which end the common part.
stop=$(nm "$lib" | awk '$3 == "__stop_allocinfo_stack_attr" { print $1 }')
[ -z "$stop" ] || [ $((0x$stop)) -le "$common_end" ] || common_end=$((0x$stop))

# Resident code, in five runs. A fault maps the 64 KiB around it, aligned in the
# address space (where the library is only page-aligned: the program says where its
# code's mapping starts), or the first 64 KiB of the mapping when that window would
# begin before it; or, where the file's page cache is in large folios (a file written
# by cp), the whole folio, aligned in the file. So the bound is the larger of the 64
# KiB windows the common part lies in by address and by file offset. A run may touch
# a page past the common part now and then (a rarely taken branch moved out of its
# function, on a busy machine), so most runs, not all, must stay within it; with the
# code in the compiler's order, all of it was resident in every run.
code=$(readelf -lW "$lib" | awk '$1 == "LOAD" && / E / { print $2, $3; exit }')
code_off=$((${code% *})) code_start=$((${code#* }))
file_end=$((common_end - code_start + code_off))
file_bound_kb=$((((file_end + 65535) / 65536 * 65536 - code_off) / 1024))
text_kb=$(($(readelf -SW "$lib" | awk '$2 == ".text" { print "0x" $6 }') / 1024))
echo "the common part ends $(((common_end - code_start) / 1024)) KiB into the library's" \
	"$text_kb KiB of code"
within=0
for run in 1 2 3 4 5; do
	out=$(ALLOCINFO=1 "$tmp/prog") || { echo "FAIL: the program failed"; exit 1; }
	rss_kb=${out% *}
	mapped_at=$((0x${out#* }))
	window_end=$(((mapped_at + common_end - code_start + 65535) / 65536 * 65536))
	bound_kb=$(((window_end - mapped_at) / 1024))
	[ "$bound_kb" -ge 64 ] || bound_kb=64
	[ "$bound_kb" -ge "$file_bound_kb" ] || bound_kb=$file_bound_kb
	echo "run $run: $rss_kb KiB of code resident, at most $bound_kb expected"
	[ "$rss_kb" -gt "$bound_kb" ] || within=$((within + 1))
done
[ "$within" -ge 3 ] || fail "only $within of 5 runs had no more of the library's code resident than expected"

# What ran natively: the library's functions outside the list.
if hits_start "$lib" 2>"$tmp/hits.err"; then
	ALLOCINFO=1 "$tmp/prog" >/dev/null || fail "the program failed with the probes"
	hits_read | awk '$1 > 0 { print $2 }' | sort -u >"$tmp/hit"
	hits_stop
	outside=$(grep -v -x -e atexit -e pthread_atfork -e __pthread_atfork "$tmp/hit" |
		join -v1 - "$tmp/listed" | grep -v -x -f "$tmp/runtime_stubs")
	echo "ran natively: $(wc -l <"$tmp/hit") of the library's functions"
	[ -z "$outside" ] ||
		fail "ran outside lib/runtime/common-text.ld (run scripts/common-text.sh):" $outside
else
	echo "no uprobes ($(cat "$tmp/hits.err")): what runs natively is not checked"
fi

# What ran under callgrind, which sees the functions a uprobe cannot (one that
# begins with a locked instruction).
if command -v valgrind >/dev/null; then
	ALLOCINFO=1 valgrind --tool=callgrind --demangle=no --callgrind-out-file="$tmp/cg.out" \
		"$tmp/prog" >/dev/null 2>&1 || fail "the program failed under callgrind"
	callgrind_functions "$tmp/cg.out" | sort -u >"$tmp/ran"
	# Only the library's own functions (not its PLT, not libc_nonshared's stubs).
	join "$tmp/ran" "$tmp/symbols" | awk '{ print $1 }' >"$tmp/ran_own"
	outside=$(join -v1 "$tmp/ran_own" "$tmp/listed" | grep -v -x -f "$tmp/runtime_stubs")
	echo "ran: $(wc -l <"$tmp/ran_own") of the library's functions"
	[ -z "$outside" ] ||
		fail "ran outside lib/runtime/common-text.ld (run scripts/common-text.sh):" $outside
else
	echo "no valgrind: what ran is not checked"
fi
exit $((failed != 0))
