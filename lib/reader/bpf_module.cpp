/* SPDX-License-Identifier: MIT */
/*
 * liballocinfo-bpf.so (see lib/store/bpf_module.h): what a process with a BPF store
 * loads once its maps are made, and keeps: tag names for the `tags` map, by the
 * readers' rules (tag_naming.cpp), and the report iterator, loaded with libbpf. It
 * runs from the thread that publishes the maps and from the first allocation of a new
 * tag, never inside malloc's start-up, with the thread's allocations charged to
 * nothing.
 */
#include "bpf_module.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <string>

#include <linux/btf.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "allocinfo_iter.skel.h"
#include "report.h"
#include "store_format.h"
#include "store_reader.h"

#define MODULE_EXPORT __attribute__((visibility("default")))

namespace allocinfo {

namespace {

/* ---- the tags map ------------------------------------------------------------------ */

/* Slot's entry of the tags map, named as the readers name it (dynamic tags
 * unsymbolized: naming them means reading debug info, which a profiler must not do
 * inside someone else's program; allocinfo and allocinfod name them). */
void bpf_name_tag(const void *store, size_t size, uint32_t slot, allocinfo_bpf_tag *out)
{
	const char *base = static_cast<const char *>(store);
	const auto *h = static_cast<const allocinfo_store_header *>(store);
	const auto &t = reinterpret_cast<const allocinfo_store_tag *>(base + h->tags_offset)[slot];
	uint64_t used = std::min<uint64_t>(h->strings_used, size - h->strings_offset);
	/* The tokens: written with the slot, before the process publishes it here. */
	allocinfo_store_tag_ext e = {};
	if (h->ext_offset && h->ext_offset <= size &&
	    slot < (size - h->ext_offset) / sizeof(allocinfo_store_tag_ext))
		e = reinterpret_cast<const allocinfo_store_tag_ext *>(base + h->ext_offset)[slot];
	tag_snapshot ts = live_tag_snapshot(slot, t, e, base + h->strings_offset, used);
	site_row r;
	name_tag_unsymbolized(ts, r);
	copy_fixed_field(out->file, sizeof(out->file), r.file);
	out->line = r.line;
	copy_fixed_field(out->func, sizeof(out->func), r.func);
	copy_fixed_field(out->module, sizeof(out->module), r.module);
	out->flags = t.flags;
	copy_fixed_field(out->via, sizeof(out->via), r.via);
	copy_fixed_field(out->allocator, sizeof(out->allocator), r.allocator);
}

/* ---- the BPF store's report iterator ---------------------------------------------- */

/* libbpf's messages stay quiet inside someone else's program. */
int quiet_print(enum libbpf_print_level, const char *, va_list)
{
	return 0;
}

/*
 * The BTF id of function `name` in the kernel's BTF, 0 if not found. libbpf would
 * parse the whole of /sys/kernel/btf/vmlinux into its own tables (several MiB, tens
 * of milliseconds) to find it; one pass over a mapping of the file is enough.
 */
uint32_t kernel_func_id(const char *name)
{
	int fd = open("/sys/kernel/btf/vmlinux", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	struct stat st;
	size_t size = fstat(fd, &st) == 0 && st.st_size > 0 ? (size_t)st.st_size : 0;
	char *data = nullptr;
	bool mapped = false;
	if (size) {
		void *m = mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
		if (m != MAP_FAILED) {
			data = static_cast<char *>(m);
			mapped = true;
		} else if ((data = static_cast<char *>(malloc(size)))) {
			/* Older kernels cannot map it: read it. */
			size_t done = 0;
			ssize_t n;
			while (done < size && (n = read(fd, data + done, size - done)) > 0)
				done += (size_t)n;
			size = done;
		}
	}
	close(fd);
	if (!data)
		return 0;

	uint32_t id = 0;
	btf_header h;
	if (size >= sizeof(h)) {
		memcpy(&h, data, sizeof(h));
		uint64_t types = (uint64_t)h.hdr_len + h.type_off, strs = (uint64_t)h.hdr_len + h.str_off;
		if (h.magic == BTF_MAGIC && h.hdr_len >= sizeof(h) && types + h.type_len <= size &&
		    strs + h.str_len <= size && h.str_len > 0 && data[strs + h.str_len - 1] == '\0') {
			/* The name's offset among the (deduplicated) strings... */
			uint32_t want = 0;
			for (uint32_t off = 1; off < h.str_len && !want;) {
				const char *str = data + strs + off;
				if (strcmp(str, name) == 0)
					want = off;
				off += (uint32_t)strlen(str) + 1;
			}
			/* ...then the FUNC type with that name; ids count from 1. */
			uint64_t p = types, end = types + h.type_len;
			for (uint32_t n = 1; want && p + sizeof(btf_type) <= end; n++) {
				btf_type t;
				memcpy(&t, data + p, sizeof(t));
				uint32_t kind = BTF_INFO_KIND(t.info), vlen = BTF_INFO_VLEN(t.info);
				if (kind == BTF_KIND_FUNC && t.name_off == want) {
					id = n;
					break;
				}
				uint64_t extra;
				switch (kind) {
				case BTF_KIND_INT: case BTF_KIND_VAR: case BTF_KIND_DECL_TAG:
					extra = 4;
					break;
				case BTF_KIND_ARRAY:
					extra = 12;
					break;
				case BTF_KIND_STRUCT: case BTF_KIND_UNION: case BTF_KIND_DATASEC:
				case BTF_KIND_ENUM64:
					extra = 12ull * vlen;
					break;
				case BTF_KIND_ENUM: case BTF_KIND_FUNC_PROTO:
					extra = 8ull * vlen;
					break;
				case BTF_KIND_PTR: case BTF_KIND_FWD: case BTF_KIND_TYPEDEF:
				case BTF_KIND_VOLATILE: case BTF_KIND_CONST: case BTF_KIND_RESTRICT:
				case BTF_KIND_FUNC: case BTF_KIND_FLOAT: case BTF_KIND_TYPE_TAG:
					extra = 0;
					break;
				default:
					want = 0;	/* a kind we cannot step over */
					extra = 0;
					break;
				}
				p += sizeof(btf_type) + extra;
			}
		}
	}
	if (mapped)
		munmap(data, size);
	else
		free(data);
	return id;
}

uint32_t g_iter_btf_id;
int g_iter_handler;	/* libbpf's id for our section handler; 0 before registering */

/*
 * libbpf's hook for section "allocinfo_iter", called just before the program is
 * loaded: it becomes an iterator attached to bpf_iter_ksym. libbpf (1.1) reads and
 * indexes the whole kernel BTF at load time for any program whose type is TRACING
 * when loading starts, even one whose attach id is known; so the program is
 * registered under another type and turned into TRACING here.
 */
int prepare_iter_load(struct bpf_program *prog, struct bpf_prog_load_opts *opts, long)
{
	if (g_iter_btf_id)
		opts->attach_btf_id = g_iter_btf_id;
	opts->expected_attach_type = BPF_TRACE_ITER;
	return bpf_program__set_type(prog, BPF_PROG_TYPE_TRACING);
}

/*
 * Loads the iterator bound to the current maps and pins it; 0 or an errno value.
 * `cheap`: as prepare_iter_load() explains; else the program is TRACING from the
 * start and libbpf finds its attach point itself (slower, the way that must work
 * with any libbpf).
 */
int load_iterator(const allocinfo_bpf_iter_args &a, bool cheap = true)
{
	if (!g_iter_btf_id)
		g_iter_btf_id = kernel_func_id("bpf_iter_ksym");
	libbpf_print_fn_t saved = libbpf_set_print(quiet_print);
	if (!g_iter_handler) {
		/* Registered once for good: libbpf 1.1 keeps a dangling pointer when its
		 * last handler is unregistered. */
		LIBBPF_OPTS(libbpf_prog_handler_opts, handler,
			    .prog_prepare_load_fn = prepare_iter_load);
		g_iter_handler = libbpf_register_prog_handler("allocinfo_iter",
							      BPF_PROG_TYPE_SOCKET_FILTER,
							      BPF_TRACE_ITER, &handler);
	}
	if (g_iter_handler < 0 || !g_iter_btf_id)
		cheap = false;
	int err = 0;
	struct allocinfo_iter *skel = allocinfo_iter__open();
	struct bpf_link *link = nullptr;
	struct bpf_program *prog = skel ? skel->progs.allocinfo_report : nullptr;
	if (!skel) {
		err = errno ? errno : ENOMEM;
		goto out;
	}
	if (!cheap && (bpf_program__set_type(prog, BPF_PROG_TYPE_TRACING) != 0 ||
		       bpf_program__set_expected_attach_type(prog, BPF_TRACE_ITER) != 0 ||
		       bpf_program__set_attach_target(prog, 0, "ksym") != 0)) {
		err = errno ? errno : ENOENT;
		goto out;
	}
	skel->rodata->nr_cpus = a.nr_cpus;
	skel->rodata->tag_capacity = a.tag_capacity;
	if (bpf_map__reuse_fd(skel->maps.counters, a.counters_fd) != 0 ||
	    bpf_map__reuse_fd(skel->maps.tags, a.tags_fd) != 0 ||
	    allocinfo_iter__load(skel) != 0) {
		err = errno ? errno : EINVAL;
		goto out;
	}
	link = bpf_program__attach_iter(prog, nullptr);
	if (!link) {
		err = errno ? errno : EINVAL;
		goto out;
	}
	if (bpf_link__pin(link, a.pin_path) != 0)
		err = errno ? errno : EINVAL;
	/* The pin holds the link, the link the program: nothing more to keep. */
	bpf_link__destroy(link);
out:
	allocinfo_iter__destroy(skel);
	libbpf_set_print(saved);
	if (err && cheap)
		return load_iterator(a, false);
	return err;
}

int bpf_load_iterator(const allocinfo_bpf_iter_args *a)
{
	return load_iterator(*a);
}

} /* namespace */

} /* namespace allocinfo */

extern "C" MODULE_EXPORT const struct allocinfo_bpf_module_v1 allocinfo__bpf_v1 = {
	sizeof(struct allocinfo_bpf_module_v1),
	allocinfo::bpf_name_tag,
	allocinfo::bpf_load_iterator,
};
