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
CORE_CXXFLAGS = -std=gnu++17 $(WARN_CXXFLAGS) -fvisibility=hidden -fno-rtti \
	-fno-exceptions
# Under a sanitizer, frame pointers on the allocation path too, so that
# LeakSanitizer's fast unwinder sees who asked: the dynamic TLS that dlopen of
# liballocinfo-reader.so allocates through it (__tls_get_addr) is not a leak.
if SANITIZER
SAN_FRAME_FLAGS = -fno-omit-frame-pointer
endif
CORE_CXXFLAGS += $(SAN_FRAME_FLAGS)

include lib/reader/local.mk
include lib/store/local.mk
include lib/runtime/local.mk
