#!/bin/bash
# SPDX-License-Identifier: MIT
# Builds real projects unchanged, twice (CC=gcc CXX=g++, then CC=allocinfo-cc
# CXX=allocinfo-c++), runs each one's own test suite (a bounded part of the long
# ones) after each build, and prints the build time, test result, test time and peak
# RSS of both side by side (and the build's CPU time, steadier than its elapsed time on
# a busy machine), and whether the instrumented build was counted: a line of the
# project's own code in an allocinfo report of one of its programs.
#
#   tests/realworld/run.sh [-j N] [--only NAME,...] [--keep] NAME=GIT_DIR ...
#   ALLOCINFO_REALWORLD_REPOS="jq=/src/jq git=/src/git ..." tests/realworld/run.sh
#
# NAME is one of jq, zstd, zstd-c99, redis, leveldb, cJSON, git, git-malloc-check, lua
# (zstd-c99: zstd built with its `make c99build` flags, from the zstd repository;
# git-malloc-check: git's tests with its own allocator check, from the git
# repository). GIT_DIR is a clone (bare or not) of the project's public repository;
# it is cloned again into a scratch directory, never changed. The allocinfo-cc and
# allocinfo-c++ used are the first on PATH (`make check-realworld` puts the built
# ones there). Not part of `make check`.
#
# Where a project needs a git submodule that a plain clone lacks, the script uses the
# system's copy instead: jq's vendor/oniguruma (the system's libonig, which jq's
# configure looks for first) and leveldb's third_party/googletest (the googletest
# package's sources); leveldb's benchmarks (third_party/benchmark) are not built.
set -u

jobs=2
only=""
keep=no
repos=()
while [ $# -gt 0 ]; do
	case $1 in
	-j) jobs=$2; shift ;;
	-j*) jobs=${1#-j} ;;
	--only) only=,$2,; shift ;;
	--keep) keep=yes ;;
	-h|--help) sed -n '3,24p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*=*) repos+=("$1") ;;
	*) echo "run.sh: unknown argument $1 (expected NAME=GIT_DIR)" >&2; exit 2 ;;
	esac
	shift
done
# shellcheck disable=SC2206
[ ${#repos[@]} = 0 ] && repos=(${ALLOCINFO_REALWORLD_REPOS:-})
if [ ${#repos[@]} = 0 ]; then
	echo "run.sh: no projects: give NAME=GIT_DIR arguments or ALLOCINFO_REALWORLD_REPOS" >&2
	exit 2
fi

# What the projects' builds and tests need (Debian package names).
need="git make cmake autoconf automake libtool pkg-config bison flex tcl time
	libonig-dev googletest zlib1g-dev"
missing=""
for p in $need; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' ||
		missing="$missing $p"
done
if [ -n "$missing" ]; then
	if [ "$(id -u)" = 0 ]; then
		echo "run.sh: installing$missing" >&2
		# shellcheck disable=SC2086
		DEBIAN_FRONTEND=noninteractive apt-get install -y -q $missing >/dev/null ||
			{ apt-get update -q >/dev/null && DEBIAN_FRONTEND=noninteractive \
				apt-get install -y -q $missing >/dev/null; } || exit 1
	else
		echo "run.sh: missing packages:$missing" >&2
		exit 1
	fi
fi

for w in allocinfo-cc allocinfo-c++ allocinfo; do
	command -v $w >/dev/null || { echo "run.sh: $w is not on PATH" >&2; exit 1; }
done
CLI=$(command -v allocinfo)

work=$(mktemp -d "${TMPDIR:-/tmp}/allocinfo-realworld.XXXXXX") || exit 1
if [ $keep = no ]; then trap 'rm -rf "$work"' EXIT; else echo "run.sh: working in $work" >&2; fi
# Stores are memfds, as users get them: with a store directory on a disk filesystem,
# each of a test suite's thousands of processes spends milliseconds in the page cache.
export ALLOCINFO_STORE=${ALLOCINFO_STORE:-shm}
unset ALLOCINFO_STORE_DIR
export MAKEFLAGS= GIT_CONFIG_NOSYSTEM=1 jobs

# ---- measuring ------------------------------------------------------------------

# timed LABEL DIR FUNCTION: runs the shell function in DIR, output in $work/LABEL.log;
# its elapsed seconds, peak RSS (KiB, of its largest process) and CPU seconds (user
# and system, of all its processes) in $work/LABEL.time.
timed() {
	local label=$1 dir=$2 fn=$3
	(cd "$dir" && /usr/bin/time -f '%e %M %U %S' -o "$work/$label.time" \
		bash -c "$(declare -f "$fn" git_flags git_tests); $fn") >"$work/$label.log" 2>&1
}

# A program's report, written when it exits (preloaded into the one run that shows
# whether a build is counted, for projects whose programs do not stay running).
cat >"$work/report_at_exit.c" <<'EOF'
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>
extern long allocinfo_print(int fd);
__attribute__((destructor)) static void report_at_exit(void)
{
	const char *path = getenv("REALWORLD_REPORT");
	int fd = path ? open(path, O_WRONLY | O_CREAT | O_APPEND, 0644) : -1;
	if (fd >= 0) {
		allocinfo_print(fd);
		close(fd);
	}
}
EOF
gcc -shared -fPIC -O2 "$work/report_at_exit.c" -o "$work/report_at_exit.so" || exit 1

# live_report DIR PATTERN COMMAND...: starts COMMAND in DIR, its standard input a
# pipe kept open, takes its report with `allocinfo -p` and prints the lines that
# match PATTERN with live allocations.
live_report() {
	local dir=$1 pattern=$2 pid
	shift 2
	mkfifo "$work/hold"
	(cd "$dir" && exec "$@" <"$work/hold" >/dev/null 2>&1) &
	pid=$!
	exec 9>"$work/hold"
	sleep 2
	"$CLI" -p "$pid" >"$work/report.txt" 2>&1
	exec 9>&-
	kill "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	rm -f "$work/hold"
	awk '$2 > 0' "$work/report.txt" | grep -E -- "$pattern"
}

# exit_report DIR PATTERN COMMAND...: the same for a program that runs and exits: its
# report when it exits, which holds what was still allocated then.
exit_report() {
	local dir=$1 pattern=$2
	shift 2
	rm -f "$work/report.txt"
	(cd "$dir" && REALWORLD_REPORT=$work/report.txt LD_PRELOAD=$work/report_at_exit.so \
		"$@" >/dev/null 2>&1)
	awk '$2 > 0' "$work/report.txt" 2>/dev/null | grep -E -- "$pattern"
}

# ---- the projects ----------------------------------------------------------------
# build_NAME SRC, tests_NAME SRC, counted_NAME SRC: run in SRC with CC and CXX set.

build_jq() { autoreconf -fi && ./configure --disable-docs --disable-valgrind \
	--with-oniguruma=yes CC="$CC" && make -j"$jobs"; }
tests_jq() { make -j"$jobs" check; }
counted_jq() { live_report "$1" '\.c:[0-9]+ \[(jq|libjq[^]]*)\]' ./jq .; }

# zstd: the command-line program (its Makefile builds the library's files into it).
build_zstd() { make -j"$jobs" -C programs CC="$CC" CXX="$CXX" zstd; }
# zstd's `make check` (playTests.sh) takes about 9 minutes here: its unit tests and a
# bounded run of its fuzzers instead.
tests_zstd() { make -j"$jobs" -C tests CC="$CC" CXX="$CXX" fuzzer zstreamtest &&
	./tests/fuzzer -s1 -i100 && ./tests/zstreamtest -s1 -i100 &&
	./programs/zstd -b1e5 -i0 README.md; }
counted_zstd() { live_report "$1" '\.c:[0-9]+ \[zstd\]' ./programs/zstd -q -c; }

# `make c99build` is `CFLAGS="-std=c99 -Werror -O0" make allmost` (the library, all
# programs and test tools, the zlib wrapper: about 20 minutes here); the same flags on
# the command-line program and the unit tests.
build_zstd-c99() { make -j"$jobs" -C programs CC="$CC" CXX="$CXX" \
	CFLAGS="-std=c99 -Werror -O0" zstd; }
tests_zstd-c99() { make -j"$jobs" -C tests CC="$CC" CXX="$CXX" CFLAGS="-std=c99 -Werror -O0" \
	fuzzer && ./tests/fuzzer -s1 -i20 && ./programs/zstd -b1e3 -i0 README.md; }
counted_zstd-c99() { live_report "$1" '\.c:[0-9]+ \[zstd\]' ./programs/zstd -q -c; }

build_redis() { make -j"$jobs" MALLOC=libc CC="$CC" CXX="$CXX"; }
tests_redis() { ./runtest --clients 2 --single unit/printver --single unit/keyspace \
	--single unit/type/string --single unit/type/list --single unit/type/hash \
	--single unit/expire; }
counted_redis() { live_report "$1" '\.c:[0-9]+ \[redis-server\]' ./src/redis-server \
	--port 0 --unixsocket "$work/redis.sock" --save '' --appendonly no; }

build_leveldb() {
	# the googletest submodule, from the system's sources
	rmdir third_party/googletest 2>/dev/null
	[ -e third_party/googletest/CMakeLists.txt ] || cp -r /usr/src/googletest third_party/
	# Its sources use C++17 (std::is_standard_layout_v) where its CMakeLists.txt
	# still defaults to C++11 unless CMAKE_CXX_STANDARD is given: given, both builds.
	cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_STANDARD=17 \
		-DLEVELDB_BUILD_TESTS=ON \
		-DLEVELDB_BUILD_BENCHMARKS=OFF -DCMAKE_C_COMPILER="$CC" \
		-DCMAKE_CXX_COMPILER="$CXX" && cmake --build build -j"$jobs"
}
# DBTest.HiddenValuesAreRemoved depends on when a background compaction runs: it
# fails now and then in the plain build too.
tests_leveldb() { ./build/leveldb_tests --gtest_brief=1 \
	--gtest_filter='-DBTest.Randomized*:DBTest.MultiThreaded*:DBTest.HiddenValuesAreRemoved' &&
	./build/c_test; }
counted_leveldb() { exit_report "$1" '\[(c_test|libleveldb[^]]*)\]' ./build/c_test; }

# lua: its own makefile (-std=c99 -Wc++-compat and a dozen more warnings); the whole
# suite as its `all` script runs it: the C modules in testes/libs, a 1100 KiB stack
# (its C stack overflow tests recurse up to it), and stdin a pipe (files.lua expects
# seeking stdin to fail).
build_lua() { make -s -j"$jobs" CC="$CC"; }
tests_lua() { (cd testes/libs && make -s) && cd testes && ulimit -S -s 1100 &&
	true | ../lua -W all.lua && echo "the suite ended: final OK"; }
counted_lua() { live_report "$1" '\.c:[0-9]+ \[lua\]' ./lua -e \
	'T = {} for i = 1, 1000 do T[i] = ("x"):rep(100) .. i end io.read()'; }

build_cJSON() { cmake -S . -B build -DENABLE_CJSON_TEST=On -DCMAKE_C_COMPILER="$CC" &&
	cmake --build build -j"$jobs" && grep '^FLAG_SUPPORTED_stdc89:' build/CMakeCache.txt; }
tests_cJSON() { cd build && ctest -j"$jobs" --output-on-failure; }
counted_cJSON() { exit_report "$1" '\.c:[0-9]+ \[parse_examples\]' ./build/tests/parse_examples; }

git_flags() { echo DEVELOPER=1 NO_CURL=1 NO_EXPAT=1 NO_GETTEXT=1 NO_TCLTK=1 NO_PERL=1 \
	NO_PYTHON=1 CC="$CC"; }
build_git() { make -j"$jobs" $(git_flags) all; }
git_tests() { echo t0000-basic.sh t0001-init.sh t1300-config.sh t3200-branch.sh \
	t4000-diff-format.sh t5300-pack-object.sh t7001-mv.sh t7102-reset.sh; }
# TEST_NO_MALLOC_CHECK: the two builds' tests compared alike, without git's own
# allocator check (git-malloc-check below runs them with it).
tests_git() { TEST_NO_MALLOC_CHECK=1 make -j"$jobs" $(git_flags) -C t T="$(git_tests)" \
	GIT_TEST_OPTS=--quiet; }
counted_git() { live_report "$1" '\.c:[0-9]+ \[git\]' ./git cat-file --batch; }

# git-malloc-check: the same scripts as git's suite runs them by default, with glibc's
# libc_malloc_debug.so.0 preloaded (MALLOC_CHECK_=3, MALLOC_PERTURB_=165): an
# allocator that comes before liballocinfo. The suite turns the check off when that
# preload prints anything, so that must be silent first.
build_git-malloc-check() { make -j"$jobs" $(git_flags) all; }
tests_git-malloc-check() {
	local out
	out=$(LD_PRELOAD=libc_malloc_debug.so.0 ./git version 2>&1 >/dev/null)
	[ -z "$out" ] || { echo "git under libc_malloc_debug.so.0 says: $out"; return 1; }
	make -j"$jobs" $(git_flags) -C t T="$(git_tests)" GIT_TEST_OPTS=--quiet
}
counted_git-malloc-check() { live_report "$1" '\.c:[0-9]+ \[git\]' env \
	LD_PRELOAD=libc_malloc_debug.so.0 GLIBC_TUNABLES=glibc.malloc.check=1 ./git cat-file --batch; }

# ---- running ---------------------------------------------------------------------

mb() { awk -v k="$1" 'BEGIN { if (k == "") print "-"; else printf "%.0f", k / 1024 }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "" || b == "" || b + 0 == 0) print "-";
	else printf "%.2fx", a / b }'; }

declare -A res	# "name:variant:what" -> value
names=()
for spec in "${repos[@]}"; do
	name=${spec%%=*}
	gitdir=${spec#*=}
	case $name in
	jq|zstd|zstd-c99|redis|leveldb|cJSON|git|lua) ;;
	*) echo "run.sh: unknown project $name" >&2; exit 2 ;;
	esac
	# zstd's c99build comes from the zstd repository too, git under its own
	# allocator check from the git repository.
	case $name in
	zstd) all="zstd zstd-c99" ;;
	git) all="git git-malloc-check" ;;
	*) all=$name ;;
	esac
	list=""
	for n in $all; do
		[ -z "$only" ] || case $only in *",$n,"*) ;; *) continue ;; esac
		list="$list $n"
	done
	for n in $list; do
		names+=("$n")
		for variant in plain allocinfo; do
			src=$work/$n-$variant
			echo "== $n ($variant)" >&2
			if ! git clone -q "$gitdir" "$src" 2>"$work/$n-$variant-clone.log"; then
				echo "run.sh: cannot clone $gitdir" >&2
				res[$n:$variant:build]=no-source
				continue
			fi
			if [ $variant = plain ]; then
				export CC=gcc CXX=g++
			else
				export CC=allocinfo-cc CXX=allocinfo-c++
			fi
			if timed "$n-$variant-build" "$src" "build_$n"; then
				res[$n:$variant:build]=ok
			else
				res[$n:$variant:build]=FAILED
				tail -20 "$work/$n-$variant-build.log" >&2
				continue
			fi
			# GNU time puts "Command exited with non-zero status N" before the
			# figures when the command failed: the figures are the last line.
			read -r "res[$n:$variant:build_s]" "res[$n:$variant:build_kb]" u sys \
				< <(tail -n 1 "$work/$n-$variant-build.time")
			res[$n:$variant:build_cpu]=$(awk -v u="$u" -v s="$sys" 'BEGIN { print u + s }')
			if timed "$n-$variant-tests" "$src" "tests_$n"; then
				res[$n:$variant:tests]=pass
			else
				res[$n:$variant:tests]=FAILED
				tail -20 "$work/$n-$variant-tests.log" >&2
			fi
			read -r "res[$n:$variant:tests_s]" "res[$n:$variant:tests_kb]" _ _ \
				< <(tail -n 1 "$work/$n-$variant-tests.time")
			if [ $variant = allocinfo ]; then
				if line=$("counted_$n" "$src" | head -1) && [ -n "$line" ]; then
					res[$n:$variant:counted]="yes: $(echo "$line" | awk '{ $1 = $1; print }')"
				else
					res[$n:$variant:counted]=no
				fi
			fi
			if [ $variant = allocinfo ]; then
				# objects compiled with the header register their tags
				total=0 with=0
				while IFS= read -r o; do
					total=$((total + 1))
					nm "$o" 2>/dev/null | grep -q ' U allocinfo_register_tags$' &&
						with=$((with + 1))
				done < <(find "$src" -name '*.o')
				res[$n:$variant:objects]="$with of $total objects with the header"
			fi
			[ $n = cJSON ] && res[$n:$variant:c89]=$(grep -o 'stdc89:INTERNAL=.*' \
				"$work/$n-$variant-build.log" | tail -1)
			[ $keep = no ] && rm -rf "$src"
		done
	done
done

printf '\n%-9s | %-23s | %-23s | %-23s | %-31s | %-23s\n' "" "build time (s)" \
	"build CPU time (s)" "build peak RSS (MiB)" "tests: result, time (s)" \
	"tests peak RSS (MiB)"
printf '%-9s | %-7s %-7s %-7s | %-7s %-7s %-7s | %-7s %-7s %-7s | %-11s %-11s %-7s | %-7s %-7s %-7s\n' \
	project plain alloc ratio plain alloc ratio plain alloc ratio plain allocinfo ratio \
	plain alloc ratio
for n in "${names[@]}"; do
	p() { echo "${res[$n:$1:$2]:-}"; }
	printf '%-9s | %-7s %-7s %-7s | %-7s %-7s %-7s | %-7s %-7s %-7s | %-11s %-11s %-7s | %-7s %-7s %-7s\n' "$n" \
		"$(p plain build_s)" "$(p allocinfo build_s)" \
		"$(ratio "$(p allocinfo build_s)" "$(p plain build_s)")" \
		"$(p plain build_cpu)" "$(p allocinfo build_cpu)" \
		"$(ratio "$(p allocinfo build_cpu)" "$(p plain build_cpu)")" \
		"$(mb "$(p plain build_kb)")" "$(mb "$(p allocinfo build_kb)")" \
		"$(ratio "$(p allocinfo build_kb)" "$(p plain build_kb)")" \
		"$(p plain tests) $(p plain tests_s)" "$(p allocinfo tests) $(p allocinfo tests_s)" \
		"$(ratio "$(p allocinfo tests_s)" "$(p plain tests_s)")" \
		"$(mb "$(p plain tests_kb)")" "$(mb "$(p allocinfo tests_kb)")" \
		"$(ratio "$(p allocinfo tests_kb)" "$(p plain tests_kb)")"
done
echo
fail=0
for n in "${names[@]}"; do
	echo "$n: build ${res[$n:plain:build]:-?}/${res[$n:allocinfo:build]:-?}," \
		"${res[$n:allocinfo:objects]:-}, counted: ${res[$n:allocinfo:counted]:-no}${res[$n:allocinfo:c89]:+, -std=c89 probe: ${res[$n:allocinfo:c89]}}"
	[ "${res[$n:allocinfo:build]:-}" = ok ] || fail=1
	[ "${res[$n:plain:tests]:-}" = pass ] && [ "${res[$n:allocinfo:tests]:-}" != pass ] && fail=1
	case ${res[$n:allocinfo:counted]:-no} in yes*) ;; *) fail=1 ;; esac
done
exit $fail
