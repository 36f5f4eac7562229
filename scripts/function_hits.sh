# SPDX-License-Identifier: MIT
# Sourced: which functions of liballocinfo.so run. Natively, counted by a uprobe at
# each function's entry (root, and the kernel's tracefs): every process that maps
# that file counts, so give it a file of its own to measure one program. Or from a
# callgrind run's output.
#
#   hits_start LIB            a probe on each function of LIB (nm's t, T, W), enabled;
#                             false with a message when probes cannot be made
#   hits_read                 "HITS NAME" for each function, HITS since hits_start
#   hits_stop                 the probes removed: call it at exit too (trap)
#   callgrind_functions FILE  the names of the functions of liballocinfo.so that ran
#                             in callgrind's output FILE (--demangle=no), a line each
hits_dir=/sys/kernel/tracing
hits_group=allocinfo_fn_$$

hits_start() {
	_lib=$1
	if [ "$(id -u)" != 0 ]; then
		echo "function_hits: uprobes need root" >&2
		return 1
	fi
	[ -w "$hits_dir/uprobe_events" ] || mount -t tracefs nodev "$hits_dir" 2>/dev/null
	[ -w "$hits_dir/uprobe_events" ] || { echo "function_hits: no tracefs at $hits_dir" >&2; return 1; }
	hits_names=$(mktemp) || return 1
	# A function's probe is at its file offset: its address less its segment's, plus
	# the segment's offset (the code's LOAD header, flags R E).
	_seg=$(readelf -lW "$_lib" | awk '$1 == "LOAD" && / E / { print $2, $3; exit }')
	_off=$((${_seg% *})) _vaddr=$((${_seg#* }))
	nm --defined-only "$_lib" | awk '$2 ~ /^[tTwW]$/ { print $1, $3 }' | sort -u -k2,2 |
		awk '{ print NR, $1, $2 }' >"$hits_names"
	while read -r _n _addr _name; do
		printf 'p:%s/f%s %s:0x%x\n' "$hits_group" "$_n" "$_lib" $((0x$_addr - _vaddr + _off))
	done <"$hits_names" >>"$hits_dir/uprobe_events" ||
		{ echo "function_hits: the kernel refused the probes" >&2; hits_stop; return 1; }
	echo 1 >"$hits_dir/events/$hits_group/enable"
}

hits_read() {
	awk 'NR == FNR { name[$1] = $3; next }
		$2 ~ "^f[0-9]+$" { n = substr($2, 2); if (n in name) print $3, name[n] }' \
		"$hits_names" "$hits_dir/uprobe_profile"
}

hits_stop() {
	[ -n "${hits_names:-}" ] || return 0
	if [ -d "$hits_dir/events/$hits_group" ]; then
		echo 0 >"$hits_dir/events/$hits_group/enable"
		while read -r _n _rest; do
			echo "-:$hits_group/f$_n"
		done <"$hits_names" >>"$hits_dir/uprobe_events"
	fi 2>/dev/null
	rm -f "$hits_names"
	hits_names=
}

# Callgrind's names are compressed: the first use of an id gives the name.
callgrind_functions() {
	awk '
		match($0, /^(c?ob|c?fn)=\([0-9]+\)/) {
			kind = substr($0, 1, index($0, "=") - 1)
			id = substr($0, index($0, "(") + 1, index($0, ")") - index($0, "(") - 1)
			name = substr($0, index($0, ")") + 2)
			if (kind ~ /ob$/) {
				if (name != "") obj[id] = name
				if (kind == "ob") in_lib = obj[id] ~ /\/liballocinfo\.so[.0-9]*$/
			} else {
				if (name != "") fn[id] = name
				if (kind == "fn" && in_lib) {
					f = fn[id]
					sub(/'\''[0-9]+$/, "", f)	# callgrind'\''s recursion depth
					print f
				}
			}
		}' "$1"
}
