# SPDX-License-Identifier: MIT
# The BPF store. Readers always understand it (lib/reader/store_bpf_reader.cpp needs only the
# kernel's uapi headers); the writer and the report iterator are built when configure
# found libbpf, clang's BPF target, bpftool and kernel BTF (--disable-bpf skips them).

lib_libreader_la_SOURCES += lib/store/store_bpf_format.h lib/store/store_bpf_sys.h \
	lib/reader/store_bpf_reader.h lib/reader/store_bpf_reader.cpp \
	lib/reader/bpf_tag_names.h lib/reader/bpf_tag_names.cpp
lib_liballocinfo_la_SOURCES += lib/store/store_bpf.h

EXTRA_DIST += tools/bpf/allocinfo_iter.bpf.c Documentation/bpf.md

if ENABLE_BPF
lib_liballocinfo_la_SOURCES += lib/store/store_bpf.cpp
# Tag names for the tags map and the iterator, loaded with libbpf: the BPF module
# (lib/store/bpf_module.h), which every BPF-store process keeps mapped and so copies
# at each fork. Its part of libstdc++ is linked in: libtool links C++ with
# -nostdlib and the shared libstdc++, so this one is linked as C, with the archive
# named; only the module's table is exported.
pkglib_LTLIBRARIES += lib/liballocinfo-bpf.la
lib_liballocinfo_bpf_la_SOURCES = lib/store/bpf_module.h lib/reader/bpf_module.cpp \
	lib/reader/tag_naming.cpp lib/reader/cxxname.cpp lib/reader/bpf_module.sym
lib_liballocinfo_bpf_la_CXXFLAGS = $(LIB_CXXFLAGS) $(LIBBPF_CFLAGS) -I$(top_builddir)/tools/bpf
lib_liballocinfo_bpf_la_LIBADD = $(LIBBPF_LIBS) $(STATIC_LIBSTDCXX)
lib_liballocinfo_bpf_la_LDFLAGS = -module -avoid-version -shared -Wl,-z,nodelete \
	-Wl,--version-script=$(top_srcdir)/lib/reader/bpf_module.sym -Wl,--as-needed \
	-Wl,--no-undefined
lib_liballocinfo_bpf_la_LINK = $(LIBTOOL) $(AM_V_lt) --tag=CC $(AM_LIBTOOLFLAGS) \
	$(LIBTOOLFLAGS) --mode=link $(CCLD) $(AM_CFLAGS) $(CFLAGS) \
	$(lib_liballocinfo_bpf_la_LDFLAGS) $(LDFLAGS) -o $@
EXTRA_lib_liballocinfo_bpf_la_DEPENDENCIES = $(top_srcdir)/lib/reader/bpf_module.sym
BUILT_SOURCES += tools/bpf/allocinfo_iter.skel.h
CLEANFILES += tools/bpf/vmlinux.h tools/bpf/allocinfo_iter.bpf.o \
	tools/bpf/allocinfo_iter.debug.o tools/bpf/allocinfo_iter.skel.h

BPF_CFLAGS = -g -O2 -target bpf -DBPF_NO_PRESERVE_ACCESS_INDEX \
	-I$(top_builddir)/tools/bpf -I$(top_srcdir)/lib/store $(LIBBPF_CFLAGS)

# The running kernel's types, for the iterator's context structures.
tools/bpf/vmlinux.h:
	$(AM_V_GEN)$(MKDIR_P) tools/bpf && \
	$(BPFTOOL) btf dump file /sys/kernel/btf/vmlinux format c > $@.tmp && mv $@.tmp $@

# `bpftool gen object` drops the DWARF and keeps the BTF: a small embedded object.
tools/bpf/allocinfo_iter.bpf.o: $(top_srcdir)/tools/bpf/allocinfo_iter.bpf.c \
		tools/bpf/vmlinux.h $(top_srcdir)/lib/store/store_format.h \
		$(top_srcdir)/lib/store/store_bpf_format.h
	$(AM_V_GEN)$(BPF_CLANG) $(BPF_CFLAGS) -c $(top_srcdir)/tools/bpf/allocinfo_iter.bpf.c \
		-o tools/bpf/allocinfo_iter.debug.o && \
	$(BPFTOOL) gen object $@ tools/bpf/allocinfo_iter.debug.o

tools/bpf/allocinfo_iter.skel.h: tools/bpf/allocinfo_iter.bpf.o
	$(AM_V_GEN)$(BPFTOOL) gen skeleton tools/bpf/allocinfo_iter.bpf.o \
		name allocinfo_iter > $@.tmp && mv $@.tmp $@
endif
