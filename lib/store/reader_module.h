/* SPDX-License-Identifier: MIT */
/*
 * The interface between liballocinfo and liballocinfo-reader.so, the part of the
 * library a process loads only when it needs it (dlopen): rendering its own report
 * (allocinfo_print), naming allocinfo_pointer_info()'s tags and writing the built-in
 * profiler's files. It holds everything that needs libstdc++, libdw, libelf or zlib,
 * so that liballocinfo itself depends on libc alone. (A BPF store's tag names and
 * iterator are liballocinfo-bpf.so's: bpf_module.h.)
 *
 * The module exports one object, allocinfo__reader_v1, a table of entry points that
 * carries its own size.
 */
#ifndef ALLOCINFO_READER_MODULE_H
#define ALLOCINFO_READER_MODULE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* A tag's names as allocinfo_pointer_info() gives them: its struct allocinfo_ptr_info's
 * fields (allocinfo.h), sizes included, which the library checks. */
struct allocinfo_reader_tag_names {
	unsigned int line;
	char file[256];
	char func[256];
	char module[128];
	char via[128];
	char allocator[64];
};

/* One stack of the built-in heap profiler's table (lib/runtime/pprof_profiler.h): its
 * frames (return addresses, the program's allocation call first), the tag of its
 * call site, the estimates (pprof's unsampling already applied) and the raw sampled
 * counts the gperftools text format wants. */
struct allocinfo_heap_stack {
	uint32_t nframes;
	uint32_t tag;
	const uintptr_t *frames;
	double alloc_objects, alloc_space, inuse_objects, inuse_space;
	uint64_t raw_alloc_count, raw_alloc_bytes, raw_inuse_count, raw_inuse_bytes;
};

/* One call site with live blocks, as allocinfo counts it exactly. */
struct allocinfo_heap_site {
	uint32_t tag;
	uint32_t line;
	long long bytes, count;
	char file[256];
	char func[256];
	char module[128];
};

/* A heap profile to write: what the profiler collected, and where it goes. */
struct allocinfo_heap_snapshot {
	const char *path;		/* created with O_EXCL|O_NOFOLLOW, mode 0600 */
	int text_format;		/* gperftools heap_v2 text instead of profile.proto */
	uint64_t sample_rate;		/* bytes */
	int64_t time_nanos;		/* CLOCK_REALTIME of the snapshot */
	int64_t duration_nanos;		/* since the profiler started */
	size_t nstacks;
	const struct allocinfo_heap_stack *stacks;
	size_t nsites;
	const struct allocinfo_heap_site *sites;
	/* Snapshots come often (the previous one was taken lately): the debug
	 * information read for this one is kept for the next, instead of given back. */
	int keep_debug_info;
};

struct allocinfo_reader_v1 {
	uint32_t size;	/* sizeof(struct allocinfo_reader_v1) of the module's build */
	/* Renders the store mapped at [store, store + size) (NULL: no store, an empty
	 * report) as text to fd; the bytes written, or -1 with errno set (and, for a
	 * store it cannot read, one "allocinfo:" line on stderr). */
	ssize_t (*print_self)(int fd, const void *store, size_t size);
	/* Names slot `slot` of this process's live store at `store` as the report does
	 * (caller tags symbolized), allocator "malloc" when the tag has none; out is
	 * left as it is for a slot it cannot read. For allocinfo_pointer_info(). */
	void (*name_pointer_tag)(const void *store, size_t size, uint32_t slot,
				 struct allocinfo_reader_tag_names *out);
	/* Writes the heap profile s to s->path (through a temporary name in the same
	 * directory, renamed into place); 0 or an errno value. */
	int (*write_heap_profile)(const struct allocinfo_heap_snapshot *s);
	/* In a child forked while another thread of the parent was inside one of the
	 * calls above: drops the module's state (left to the child's memory, never
	 * freed), whose locks that thread may hold, and starts afresh. */
	void (*forked_while_in_use)(void);
};

#define ALLOCINFO_READER_SYMBOL "allocinfo__reader_v1"

#endif
