# SPDX-License-Identifier: MIT
# lib/ is three parts, one folder each, in the order data flows:
#   runtime/  what every instrumented process runs: the exported malloc family, the
#             fast path, the small-block heap, counters, the tag registry
#   store/    the store's layout and its writers (shared memory, BPF maps), and the
#             /proc parsing that names a process in a store
#   reader/   parsing stores, naming caller tags, rendering reports: shared by the
#             tools, loaded by a process only to render its own report

include_HEADERS += include/allocinfo.h

LIB_CXXFLAGS = $(AM_CXXFLAGS) -fvisibility=hidden -fno-rtti -fno-exceptions \
	-fno-omit-frame-pointer
# The allocation path runs inside the sanitizers' own start-up (their dlsym calls
# malloc before their shadow memory exists), so it is never instrumented: the
# sanitizer builds check it through the tests and the sanitizer's allocator beneath.
#
# Frame pointers: the sanitizers' fast unwinders follow them, and their walk from
# inside the allocator underneath must get through the library to the program's
# frames (the line a leak report names). Kept everywhere but in liboverride.la (the
# exported entry points, the lean path over another allocator), where they cost a
# pair five instructions (callgrind: 133 to 138 on the own heap, 159 to 164 over
# jemalloc); its few functions that call the allocator and go on keep theirs
# (KEEPS_FRAME), and a sanitizer's allocator never gets the lean path
# (theory-of-operation.md, "Programs built with a sanitizer"). Everywhere else they
# cost nothing measurable (+0.2% of instructions in the benchmark workloads at most).
CORE_CXXFLAGS = -std=gnu++17 $(WARN_CXXFLAGS) -fvisibility=hidden -fno-rtti \
	-fno-exceptions -fno-omit-frame-pointer
# Under a sanitizer, frame pointers in the entry points too, so that
# LeakSanitizer's fast unwinder sees who asked: the dynamic TLS that dlopen of
# liballocinfo-reader.so allocates through it (__tls_get_addr) is not a leak.
if SANITIZER
SAN_FRAME_FLAGS = -fno-omit-frame-pointer
endif

include lib/reader/local.mk
include lib/store/local.mk
include lib/runtime/local.mk
