# SPDX-License-Identifier: MIT
# `make check-realworld`: real projects built unchanged with allocinfo-cc and
# allocinfo-c++, their own tests run, against plain builds (tests/realworld/run.sh).
# Never part of `make check`. The projects' git directories come from
# REALWORLD_REPOS (or ALLOCINFO_REALWORLD_REPOS), as NAME=GIT_DIR words:
#   make check-realworld REALWORLD_REPOS="jq=/src/jq zstd=/src/zstd ..."
EXTRA_DIST += tests/realworld/run.sh
REALWORLD_REPOS ?= $(ALLOCINFO_REALWORLD_REPOS)

check-realworld: lib/liballocinfo.la tools/allocinfo-cc tools/allocinfo-c++ tools/allocinfo
	ALLOCINFO_INCLUDEDIR='$(abs_top_srcdir)/include' \
	ALLOCINFO_LIBDIR='$(abs_top_builddir)/lib/.libs' \
	PATH='$(abs_top_builddir)/tools:'"$$PATH" \
	$(SHELL) -c 'exec bash $(abs_top_srcdir)/tests/realworld/run.sh $(REALWORLD_FLAGS) $(REALWORLD_REPOS)'
.PHONY: check-realworld
