/* SPDX-License-Identifier: MIT */
/*
 * liballocinfo-reader.so: what a process loads only when it needs it (see
 * lib/store/reader_module.h): its own report, allocinfo_pointer_info()'s names and
 * the built-in profiler's files. Everything here may allocate, use libstdc++ and
 * libdw: it runs from allocinfo_print(), allocinfo_pointer_info() and the profiler's
 * thread, never inside malloc's start-up, always with the calling thread's
 * allocations charged to nothing.
 */
#include "reader_module.h"

#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <unistd.h>

#include <algorithm>
#include <string>
#include <vector>

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

/* Kept for the life of the process: opening debug info is the slow part of a report.
 * Not guarded across fork here: the library tells a child whose parent was inside
 * the module (forked_while_in_use()), and the child starts afresh. */
symbolizer *g_symbolizer;
pthread_mutex_t g_symbolizer_lock = PTHREAD_MUTEX_INITIALIZER;

void forked_while_in_use()
{
	g_symbolizer = nullptr;
	g_symbolizer_lock = PTHREAD_MUTEX_INITIALIZER;
}

symbolizer *get_symbolizer()
{
	pthread_mutex_lock(&g_symbolizer_lock);
	if (!g_symbolizer) {
		g_symbolizer = new symbolizer();
		g_symbolizer->remember_answers();
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
		get_symbolizer()->release_files();
	}
	std::string out;
	render_text(out, rows);
	return write_all(fd, out);
}

/* ---- the built-in heap profiler's files --------------------------------------------- */

/* The debug information read for a snapshot or a report is the program's memory:
 * given back once it is written (the answers stay, symbolize.h), unless snapshots
 * come so often that reading it again for each would cost more. */
int write_heap_profile_entry(const allocinfo_heap_snapshot *s)
{
	symbolizer *sym = get_symbolizer();
	int err = write_heap_profile(*s, sym);
	if (!s->keep_debug_info)
		sym->release_files();
	return err;
}

/* ---- allocinfo_pointer_info() ----------------------------------------------------- */

/* A seqlock read's copy: each word an acquire load, so that the second read of the
 * sequence cannot pass any of them. Unlike an acquire fence after a memcpy, this is
 * an ordering ThreadSanitizer sees; on x86 both are plain moves. */
void copy_words_acquire(void *dst, const void *src, size_t bytes)
{
	static_assert(sizeof(allocinfo_store_tag) % 4 == 0 &&
			      sizeof(allocinfo_store_tag_ext) % 4 == 0,
		      "whole 32-bit words");
	auto *d = static_cast<uint32_t *>(dst);
	const auto *s = static_cast<const uint32_t *>(src);
	for (size_t i = 0; i < bytes / 4; i++)
		d[i] = __atomic_load_n(&s[i], __ATOMIC_ACQUIRE);
}

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
		copy_words_acquire(&t, tp, sizeof(t));
		if (ep)
			copy_words_acquire(&ext, ep, sizeof(ext));
		if (!(seq & 1) && seq == __atomic_load_n(&tp->seq, __ATOMIC_RELAXED))
			break;
		if (tries == 100)
			return;
	}
	const char *strings = base + h->strings_offset;
	uint64_t used = std::min<uint64_t>(__atomic_load_n(&h->strings_used, __ATOMIC_ACQUIRE),
					   std::min<uint64_t>(h->strings_capacity, size - h->strings_offset));
	tag_snapshot ts = live_tag_snapshot(slot, t, ext, strings, used);
	site_row row;
	name_tag(ts, (t.flags & ALLOCINFO_TAGF_DYNAMIC) ? get_symbolizer() : nullptr, row);
	out->line = row.line;
	copy_fixed_field(out->file, sizeof(out->file), row.file);
	copy_fixed_field(out->func, sizeof(out->func), row.func);
	copy_fixed_field(out->module, sizeof(out->module), row.module);
	copy_fixed_field(out->via, sizeof(out->via), row.via);
	copy_fixed_field(out->allocator, sizeof(out->allocator),
		   row.allocator.empty() ? std::string("malloc") : row.allocator);
}

} /* namespace */

} /* namespace allocinfo */

extern "C" MODULE_EXPORT const struct allocinfo_reader_v1 allocinfo__reader_v1 = {
	sizeof(struct allocinfo_reader_v1),
	allocinfo::print_self,
	allocinfo::name_pointer_tag,
	allocinfo::write_heap_profile_entry,
	allocinfo::forked_while_in_use,
};
