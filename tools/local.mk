# SPDX-License-Identifier: MIT
# Command-line tools.

nodist_bin_SCRIPTS += tools/allocinfo-cc tools/allocinfo-c++
EXTRA_DIST += tools/allocinfo-cc.in tools/allocinfo-c++.in
