#!/bin/sh
# SPDX-License-Identifier: MIT
# Installs what building, testing and benchmarking allocinfo needs on Debian 12
# (as root). Does nothing when everything is already there.
set -eu
packages="build-essential autoconf automake libtool pkg-config
	liburcu-dev libdw-dev libelf-dev zlib1g-dev libcmocka-dev libc6-dbg
	libfuse3-dev fuse3 libbpf-dev bpftool clang llvm libclang-rt-14-dev
	valgrind linux-perf heaptrack python3 util-linux procps psmisc strace
	prometheus golang-go
	libjemalloc-dev libgoogle-perftools-dev libmimalloc-dev electric-fence time"
missing=""
for p in $packages; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' ||
		missing="$missing $p"
done
[ -z "$missing" ] && exit 0
if [ "$(id -u)" != 0 ]; then
	echo "deps.sh: missing packages:$missing (run as root to install them)" >&2
	exit 1
fi
echo "deps.sh: installing$missing"
export DEBIAN_FRONTEND=noninteractive
apt-get update -q >/dev/null
# shellcheck disable=SC2086
apt-get install -y -q --no-install-recommends $missing >/dev/null
