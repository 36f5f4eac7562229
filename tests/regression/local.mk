# SPDX-License-Identifier: MIT
# Long torture runs: `make regtest` (never part of `make check`).

EXTRA_DIST += tests/regression/torture.sh

regtest: $(check_PROGRAMS) $(check_LTLIBRARIES)
	top_srcdir='$(abs_top_srcdir)' top_builddir='$(abs_top_builddir)' \
	PLUGIN='$(abs_top_builddir)/tests/unit/.libs/libplugin.so' \
	$(SHELL) $(top_srcdir)/tests/regression/torture.sh
