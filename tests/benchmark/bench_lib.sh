# SPDX-License-Identifier: MIT
# Shared by the benchmark scripts (sourced, bash): reading "name=value" output and
# comparing repeated runs by their median.

# field NAME TEXT: the number after "NAME=" in TEXT.
field() { sed -n "s/.*\<$1=\([0-9.]*\).*/\1/p" <<<"$2"; }

# median_min: numbers on stdin -> "MEDIAN MIN".
median_min() {
	sort -g | awk '{ v[NR] = $1 } END {
		if (NR == 0) { print "nan nan"; exit }
		m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
		printf "%.6g %.6g\n", m, v[1] }'
}

# ratio X BASE [WIDTH]: "MEDIAN MIN" of x and of the base -> "1.02x (1.01)", padded to
# WIDTH (16) columns; "-" when the base is missing.
ratio() {
	awk -v x="$1" -v b="$2" -v w="${3:-16}" 'BEGIN { split(x, a, " "); split(b, c, " ");
		if (c[1] > 0 && a[1] != "nan") printf "%-*s", w, sprintf("%.2fx (%.2f)", a[1] / c[1], a[2] / c[2]);
		else printf "%-*s", w, "-" }'
}
