# SPDX-License-Identifier: MIT
# Command-line tools.

# allocinfo-cc, allocinfo-c++ and allocinfo.pc name installation directories: they are
# written here, at make time, so that they hold real paths whatever prefix, libdir or
# includedir configure or make was given (configure would leave ${prefix} in them).
# A library directory the dynamic linker does not search gets an RPATH.
nodist_bin_SCRIPTS += tools/allocinfo-cc tools/allocinfo-c++
EXTRA_DIST += tools/allocinfo-cc.in tools/rpath-flag.sh
CLEANFILES += tools/allocinfo-cc tools/allocinfo-c++ allocinfo.pc

allocinfo_subst = rpath=`$(SHELL) $(top_srcdir)/tools/rpath-flag.sh '$(libdir)'` && \
	sed -e 's|@includedir[@]|$(includedir)|g' -e 's|@libdir[@]|$(libdir)|g' \
	    -e 's|@prefix[@]|$(prefix)|g' -e 's|@PACKAGE_VERSION[@]|$(PACKAGE_VERSION)|g' \
	    -e "s|@RPATH[@]|$$rpath|g"

tools/allocinfo-cc: $(top_srcdir)/tools/allocinfo-cc.in $(top_srcdir)/tools/rpath-flag.sh Makefile
	$(AM_V_GEN)$(MKDIR_P) tools && $(allocinfo_subst) \
	    -e 's|@NAME[@]|allocinfo-cc|g' -e 's|@LANG[@]|C|g' \
	    -e 's|@ENV[@]|ALLOCINFO_CC|g' -e 's|@COMPILER[@]|$(CC)|g' \
	    $(top_srcdir)/tools/allocinfo-cc.in > $@.tmp && chmod +x $@.tmp && mv $@.tmp $@

tools/allocinfo-c++: $(top_srcdir)/tools/allocinfo-cc.in $(top_srcdir)/tools/rpath-flag.sh Makefile
	$(AM_V_GEN)$(MKDIR_P) tools && $(allocinfo_subst) \
	    -e 's|@NAME[@]|allocinfo-c++|g' -e 's|@LANG[@]|C++|g' \
	    -e 's|@ENV[@]|ALLOCINFO_CXX|g' -e 's|@COMPILER[@]|$(CXX)|g' \
	    $(top_srcdir)/tools/allocinfo-cc.in > $@.tmp && chmod +x $@.tmp && mv $@.tmp $@

allocinfo.pc: $(top_srcdir)/allocinfo.pc.in $(top_srcdir)/tools/rpath-flag.sh Makefile
	$(AM_V_GEN)$(allocinfo_subst) $(top_srcdir)/allocinfo.pc.in > $@.tmp && mv $@.tmp $@
EXTRA_DIST += allocinfo.pc.in

# Installed into a directory the dynamic linker finds through its cache, the library
# is found by programs only once ldconfig has run: run it (as root, into this system).
install-exec-hook: allocinfo-ldconfig
allocinfo-ldconfig:
	@if test -z "$(DESTDIR)" && test "`id -u`" = 0 && \
	    test -z "`$(SHELL) $(top_srcdir)/tools/rpath-flag.sh '$(libdir)'`"; then \
		echo " ldconfig"; ldconfig || :; fi
.PHONY: allocinfo-ldconfig

# What allocinfo-cc and allocinfo-c++ put on the include path: the header as they
# include it, and the C library headers they read with its call macros set aside.
allocinfoincdir = $(includedir)/allocinfo
allocinfoinc_HEADERS = include/allocinfo/cc.h include/allocinfo/macros-off.h \
	include/allocinfo/macros-on.h
allocinfowrapdir = $(includedir)/allocinfo/wrap
allocinfowrap_HEADERS = include/allocinfo/wrap/stdlib.h include/allocinfo/wrap/malloc.h \
	include/allocinfo/wrap/string.h include/allocinfo/wrap/stdio.h \
	include/allocinfo/wrap/mm_malloc.h
allocinfowrapjemallocdir = $(includedir)/allocinfo/wrap/jemalloc
allocinfowrapjemalloc_HEADERS = include/allocinfo/wrap/jemalloc/jemalloc.h
