/* SPDX-License-Identifier: MIT */
/*
 * heap_profile.h - the built-in heap profiler's files (lib/runtime/pprof_profiler.h),
 * written inside the profiled process by liballocinfo-reader.so:
 *
 *  - gzipped profile.proto with sample types alloc_objects/count, alloc_space/bytes,
 *    inuse_objects/count, inuse_space/bytes (the sampled stacks, unsampled), then
 *    exact_inuse_objects/count and exact_inuse_space/bytes (one sample per call site
 *    with live blocks: allocinfo's exact count); period type space/bytes, period the
 *    sample rate, default sample type inuse_space. Every sampled sample carries the
 *    label site=FILE:LINE of its call site, and so does every exact one. Mappings are
 *    the process's loaded objects (with their GNU build ids), locations carry their
 *    addresses and are already symbolized (file:line and function from the DWARF),
 *    so `go tool pprof` needs no binaries;
 *  - or the gperftools text heap format ("heap profile: ... @ heap_v2/RATE", the raw
 *    sampled counts per stack, then MAPPED_LIBRARIES: and /proc/self/maps), which
 *    pprof reads and unsamples itself, symbolizing from the binaries.
 */
#ifndef ALLOCINFO_HEAP_PROFILE_H
#define ALLOCINFO_HEAP_PROFILE_H

#include <string>
#include <vector>

#include "reader_module.h"

namespace allocinfo {

class symbolizer;

/* A loaded object's executable segment, as a pprof Mapping. */
struct loaded_segment {
	uint64_t start = 0, limit = 0, file_offset = 0;
	uint64_t bias = 0;		/* runtime address - link-time address */
	std::string path;		/* absolute */
	std::string build_id;		/* lowercase hex, may be empty */
};

/* This process's executable segments (dl_iterate_phdr). */
std::vector<loaded_segment> loaded_segments();

/* The gzipped profile.proto of s (above); false when zlib fails. */
bool render_heap_proto(std::string &out, const allocinfo_heap_snapshot &s,
		       const std::vector<loaded_segment> &segs, symbolizer *sym);

/* The gperftools text heap profile of s, maps being /proc/self/maps's text. */
void render_heap_text(std::string &out, const allocinfo_heap_snapshot &s,
		      const std::string &maps);

/* Renders s and writes it to s.path: a new file of mode 0600 created next to it
 * (O_CREAT|O_EXCL|O_NOFOLLOW), written whole, then linked to s.path, which must not
 * exist (a symlink there is neither followed nor replaced). 0 or an errno value. */
int write_heap_profile(const allocinfo_heap_snapshot &s, symbolizer *sym);

} /* namespace allocinfo */

#endif
