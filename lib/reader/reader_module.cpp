/* SPDX-License-Identifier: MIT */
/*
 * liballocinfo-reader.so: what a process loads only when it needs it (see
 * lib/store/reader_module.h): its own report, and a BPF store's tag names and report
 * iterator. Everything here may allocate, use libstdc++, libdw and libbpf: it runs
 * from allocinfo_print() and from the library's constructor, never inside malloc's
 * start-up, always with the calling thread's allocations charged to nothing.
 */
#include "reader_module.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <string>
#include <vector>

#ifdef ALLOCINFO_HAVE_BPF
#include <linux/btf.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "allocinfo_iter.skel.h"
#endif

#include "heap_profile.h"
#include "report.h"
#include "site_table.h"
#include "store_format.h"
#include "store_reader.h"
#include "symbolize.h"

#define MODULE_EXPORT __attribute__((visibility("default")))

namespace allocinfo {

namespace {

/* ---- this process's report ------------------------------------------------------ */

/* Kept for the life of the process: opening debug info is the slow part of a report. */
symbolizer *g_symbolizer;
pthread_mutex_t g_symbolizer_lock = PTHREAD_MUTEX_INITIALIZER;

/* The symbolizer's lock is held across fork, so that a child never inherits it held
 * by a thread that does not exist there. */
void symbolizer_fork_prepare()
{
	if (g_symbolizer)
		g_symbolizer->fork_prepare();
}

void symbolizer_fork_done()
{
	if (g_symbolizer)
		g_symbolizer->fork_done();
}

symbolizer *get_symbolizer()
{
	pthread_mutex_lock(&g_symbolizer_lock);
	if (!g_symbolizer) {
		pthread_atfork(symbolizer_fork_prepare, symbolizer_fork_done, symbolizer_fork_done);
		g_symbolizer = new symbolizer();
	}
	pthread_mutex_unlock(&g_symbolizer_lock);
	return g_symbolizer;
}

ssize_t write_all(int fd, const std::string &s)
{
	size_t done = 0;
	while (done < s.size()) {
		ssize_t n = write(fd, s.data() + done, s.size() - done);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		done += (size_t)n;
	}
	return (ssize_t)done;
}

ssize_t print_self(int fd, const void *store, size_t size)
{
	std::vector<site_row> rows;
	if (store) {
		store_snapshot snap;
		std::string why;
		memory_source src(store, size);
		if (!read_store(src, snap, why)) {
			std::string line = "allocinfo: cannot read this process's own store: " + why + "\n";
			write_all(2, line);
			errno = EIO;
			return -1;
		}
		site_table table(get_symbolizer(), false);
		table.add(snap);
		rows = table.rows();
	}
	std::string out;
	render_text(out, rows);
	return write_all(fd, out);
}

/* ---- the built-in heap profiler's files --------------------------------------------- */

int write_heap_profile_entry(const allocinfo_heap_snapshot *s)
{
	return write_heap_profile(*s, get_symbolizer());
}

/* ---- allocinfo_pointer_info() ----------------------------------------------------- */

void copy_field(char *dst, size_t size, const std::string &s);

/* Slot's names for allocinfo_pointer_info(), read from the process's own store,
 * which other threads write meanwhile: the slot under its seqlock, strings that are
 * only ever appended. */
void name_pointer_tag(const void *store, size_t size, uint32_t slot,
		      allocinfo_reader_tag_names *out)
{
	const char *base = static_cast<const char *>(store);
	const auto *h = static_cast<const allocinfo_store_header *>(store);
	if (slot >= h->tag_capacity)
		return;
	const auto *tp =
		reinterpret_cast<const allocinfo_store_tag *>(base + h->tags_offset) + slot;
	const allocinfo_store_tag_ext *ep = nullptr;
	if (h->ext_offset)
		ep = reinterpret_cast<const allocinfo_store_tag_ext *>(base + h->ext_offset) + slot;
	allocinfo_store_tag t;
	allocinfo_store_tag_ext ext = {};
	for (int tries = 0;; tries++) {
		uint32_t seq = __atomic_load_n(&tp->seq, __ATOMIC_ACQUIRE);
		memcpy(&t, tp, sizeof(t));
		if (ep)
			memcpy(&ext, ep, sizeof(ext));
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		if (!(seq & 1) && seq == __atomic_load_n(&tp->seq, __ATOMIC_RELAXED))
			break;
		if (tries == 100)
			return;
	}
	const char *strings = base + h->strings_offset;
	uint64_t used = std::min<uint64_t>(__atomic_load_n(&h->strings_used, __ATOMIC_ACQUIRE),
					   std::min<uint64_t>(h->strings_capacity, size - h->strings_offset));
	auto str = [strings, used](uint32_t off) {
		if (!off || off >= used)
			return std::string_view();
		const char *p = strings + off;
		const void *nul = memchr(p, 0, used - off);
		return nul ? std::string_view(p, static_cast<const char *>(nul) - p) : std::string_view();
	};
	tag_snapshot ts;
	ts.slot = slot;
	ts.flags = t.flags;
	ts.line = t.line;
	ts.addr = t.addr;
	ts.file = str(t.file_off);
	ts.func = str(t.func_off);
	ts.module_path = str(t.module_off);
	ts.via = str(ext.via_off);
	ts.allocator = str(ext.allocator_off);
	site_row row;
	name_tag(ts, (t.flags & ALLOCINFO_TAGF_DYNAMIC) ? get_symbolizer() : nullptr, row);
	out->line = row.line;
	copy_field(out->file, sizeof(out->file), row.file);
	copy_field(out->func, sizeof(out->func), row.func);
	copy_field(out->module, sizeof(out->module), row.module);
	copy_field(out->via, sizeof(out->via), row.via);
	copy_field(out->allocator, sizeof(out->allocator),
		   row.allocator.empty() ? std::string("malloc") : row.allocator);
}

/* ---- the BPF store's tags map ----------------------------------------------------- */

void copy_field(char *dst, size_t size, const std::string &s)
{
	size_t n = std::min(s.size(), size - 1);
	memcpy(dst, s.data(), n);
	memset(dst + n, 0, size - n);
}

/* Slot's entry of the tags map, named as the readers name it (dynamic tags
 * unsymbolized: naming them means reading debug info, which a profiler must not do
 * inside someone else's program; allocinfo and allocinfod name them). */
void bpf_name_tag(const void *store, size_t size, uint32_t slot, allocinfo_bpf_tag *out)
{
	const char *base = static_cast<const char *>(store);
	const auto *h = static_cast<const allocinfo_store_header *>(store);
	const auto &t = reinterpret_cast<const allocinfo_store_tag *>(base + h->tags_offset)[slot];
	const char *strings = base + h->strings_offset;
	uint64_t used = std::min<uint64_t>(h->strings_used, size - h->strings_offset);
	auto str = [&](uint32_t off) { return off == 0 || off >= used ? "" : strings + off; };
	tag_snapshot ts;
	ts.slot = slot;
	ts.flags = t.flags;
	ts.line = t.line;
	ts.addr = t.addr;
	ts.file = str(t.file_off);
	ts.func = str(t.func_off);
	ts.module_path = str(t.module_off);
	/* The tokens: written with the slot, before the process publishes it here. */
	if (h->ext_offset && h->ext_offset <= size &&
	    slot < (size - h->ext_offset) / sizeof(allocinfo_store_tag_ext)) {
		const auto &e = reinterpret_cast<const allocinfo_store_tag_ext *>(
			base + h->ext_offset)[slot];
		ts.via = str(e.via_off);
		ts.allocator = str(e.allocator_off);
	}
	site_row r;
	name_tag(ts, nullptr, r);
	copy_field(out->file, sizeof(out->file), r.file);
	out->line = r.line;
	copy_field(out->func, sizeof(out->func), r.func);
	copy_field(out->module, sizeof(out->module), r.module);
	out->flags = t.flags;
	copy_field(out->via, sizeof(out->via), r.via);
	copy_field(out->allocator, sizeof(out->allocator), r.allocator);
}

#ifdef ALLOCINFO_HAVE_BPF
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
#endif

} /* namespace */

} /* namespace allocinfo */

extern "C" MODULE_EXPORT const struct allocinfo_reader_v1 allocinfo__reader_v1 = {
	sizeof(struct allocinfo_reader_v1),
	allocinfo::print_self,
	allocinfo::bpf_name_tag,
#ifdef ALLOCINFO_HAVE_BPF
	allocinfo::bpf_load_iterator,
#else
	nullptr,
#endif
	allocinfo::name_pointer_tag,
	allocinfo::write_heap_profile_entry,
};
