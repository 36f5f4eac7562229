/* SPDX-License-Identifier: MIT */
/*
 * The interface between liballocinfo and liballocinfo-bpf.so, the part of the
 * library a process with a BPF store loads (dlopen) once its maps are made: it names
 * tags in the `tags` map by the readers' rules and loads the report iterator with
 * libbpf. It is kept apart from liballocinfo-reader.so (reader_module.h) and holds
 * no more than that, libstdc++ linked in statically: every object a process maps is
 * copied at each fork, and this one stays mapped for the life of every BPF-store
 * process (it needs libbpf, libelf and zlib; not libdw, libstdc++ or the renderers).
 *
 * The module exports one object, allocinfo__bpf_v1, a table of entry points that
 * carries its own size.
 */
#ifndef ALLOCINFO_BPF_MODULE_H
#define ALLOCINFO_BPF_MODULE_H

#include <stddef.h>
#include <stdint.h>

#include "store_bpf_format.h"

/* What the module needs to load the report iterator of a BPF store. */
struct allocinfo_bpf_iter_args {
	uint32_t nr_cpus, tag_capacity;
	int counters_fd, tags_fd;
	const char *pin_path;	/* where the iterator's link is pinned */
};

struct allocinfo_bpf_module_v1 {
	uint32_t size;	/* sizeof(struct allocinfo_bpf_module_v1) of the module's build */
	/* Names slot `slot` of the store at `store` by the readers' rules (caller tags
	 * unsymbolized), for the BPF tags map. */
	void (*name_tag)(const void *store, size_t size, uint32_t slot,
			 struct allocinfo_bpf_tag *out);
	/* Loads the report iterator bound to the maps and pins it; 0 or an errno
	 * value. */
	int (*load_iterator)(const struct allocinfo_bpf_iter_args *args);
};

#define ALLOCINFO_BPF_MODULE_SYMBOL "allocinfo__bpf_v1"

#endif
