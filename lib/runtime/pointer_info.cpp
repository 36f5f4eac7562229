/* SPDX-License-Identifier: MIT */
/*
 * allocinfo_pointer_info(): which live counted block holds an address, and where it
 * was allocated.
 *
 * A small block's slot follows from the address (its class, then the slot's start),
 * and its trailer says whether it is live. A glibc block carries its record in
 * front: from the address, 16-byte aligned candidates are tried downwards for a
 * record that glibc's chunk header vouches for (the chunk holds the record and the
 * size it gives), then, for blocks too large to scan (glibc maps them: their record
 * is 16 bytes into a page), page starts. The first valid record found either covers
 * the address or shows it is not in a counted block. Every read goes through
 * process_vm_readv() on this process, which fails instead of faulting, so any
 * address may be asked about; a block freed meanwhile gives a stale answer, never a
 * crash.
 */
#include <errno.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include <string>

#include "alloc.h"
#include "registry.h"
#include "store.h"
#include "store_reader.h"
#include "symbolize.h"

namespace allocinfo {
symbolizer *own_symbolizer() HIDDEN;	/* api.cpp */
}

using namespace allocinfo;

namespace {

constexpr uintptr_t SCAN_FINE = 1u << 20;	/* bytes tried 16 by 16 */
constexpr uintptr_t SCAN_PAGES = 256u << 20;	/* bytes tried page by page */
constexpr uintptr_t PAGE = 4096;

bool safe_read(uintptr_t addr, void *buf, size_t len)
{
	struct iovec local = { buf, len };
	struct iovec remote = { reinterpret_cast<void *>(addr), len };
	return process_vm_readv(getpid(), &local, 1, &remote, 1, 0) == (ssize_t)len;
}

struct found {
	uintptr_t start;
	uint64_t size;
	uint32_t slot;
};

/* The slot a record's or trailer's counter offset names, if it is a counted tag. */
bool counted_slot(uint32_t counter, uint32_t *slot)
{
	uint32_t s = (counter & g_fast.counter_mask) >> 4;
	if (s < ALLOCINFO_TAG_FIRST || s >= __atomic_load_n(&g_store.hdr->nr_tags, __ATOMIC_ACQUIRE))
		return false;
	*slot = s;
	return true;
}

bool covers(uintptr_t start, uint64_t size, uintptr_t p)
{
	return p - start < size || (size == 0 && p == start);
}

int in_small_heap(uintptr_t p, uintptr_t base, found &f)
{
	unsigned c = small::class_at(reinterpret_cast<void *>(p), base);
	uintptr_t into = ((p - base) & small::CLASS_MASK) % small::stride(c);
	uintptr_t start = p - into;
	small::trailer t;
	if (!safe_read(start + small::usable(c), &t, sizeof(t)) || t.size == small::FREED ||
	    t.size > small::usable(c) || !covers(start, t.size, p) || !counted_slot(t.counter, &f.slot))
		return -1;
	f.start = start;
	f.size = t.size;
	return 0;
}

/* A record at rec that glibc's chunk headers vouch for: its chunk holds the record
 * and the block, and is in use (the next chunk's PREV_INUSE bit, for a chunk that is
 * not mapped on its own; a freed one is unmapped). 1 valid, 0 not a record. */
int record_at(uintptr_t rec, found &f)
{
	alloc_record r;
	if (!safe_read(rec, &r, sizeof(r)) || (r.meta & RECORD_MAGIC_MASK) != RECORD_MAGIC ||
	    (r.meta & RECORD_F_UNCOUNTED) || r.size > (1ull << 46))
		return 0;
	uintptr_t start = rec + sizeof(alloc_record);
	uint32_t shift = (r.meta & RECORD_SHIFT_MASK) >> 8;
	if (!RECORD_ALWAYS) {
		/* glibc's pointer: the record's own place, or the aligned block's base. */
		uintptr_t gp = shift ? start - ((uintptr_t)1 << shift) : rec;
		uint64_t word;
		if (shift >= 48 || !safe_read(gp - 8, &word, sizeof(word)))
			return 0;
		uint64_t csize = word & ~(uint64_t)7, overhead = (word & 2) ? 16 : 8;
		if (csize < overhead || csize > (1ull << 46) ||
		    csize - overhead < start + r.size - gp)
			return 0;
		uint64_t next;
		if (!(word & 2) && (!safe_read(gp - 16 + csize + 8, &next, sizeof(next)) || !(next & 1)))
			return 0;
	}
	if (!counted_slot(r.counter, &f.slot))
		return 0;
	f.start = start;
	f.size = r.size;
	return 1;
}

int in_glibc_heap(uintptr_t p, found &f)
{
	uintptr_t top = (p & ~(uintptr_t)15) - sizeof(alloc_record);
	uintptr_t bottom = top > SCAN_FINE + PAGE ? top - SCAN_FINE : PAGE;
	/* Page by page downwards; in each, the candidates whose magic is right. */
	alignas(16) char page[PAGE];
	for (uintptr_t pg = top & ~(PAGE - 1); pg + PAGE > bottom; pg -= PAGE) {
		if (!safe_read(pg, page, PAGE))
			return -1;	/* a block does not span a hole */
		uintptr_t from = pg == (top & ~(PAGE - 1)) ? top : pg + PAGE - 16;
		for (uintptr_t rec = from; rec >= pg && rec >= bottom; rec -= 16) {
			uint32_t meta;
			memcpy(&meta, page + (rec - pg) + offsetof(alloc_record, meta), sizeof(meta));
			if ((meta & RECORD_MAGIC_MASK) == RECORD_MAGIC && record_at(rec, f))
				return covers(f.start, f.size, p) ? 0 : -1;
		}
		if (pg < 2 * PAGE)
			return -1;
	}
	/* Larger blocks are glibc's mapped chunks: the record 16 bytes into a page. */
	for (uintptr_t pg = (bottom - 1) & ~(PAGE - 1); pg + SCAN_PAGES > top && pg >= PAGE;
	     pg -= PAGE) {
		char probe;
		if (!safe_read(pg, &probe, 1))
			return -1;
		if (record_at(pg + 16, f))
			return covers(f.start, f.size, p) ? 0 : -1;
	}
	return -1;
}

void copy(char *dst, size_t len, const std::string &s)
{
	snprintf(dst, len, "%s", s.c_str());
}

/* The names of slot's tag, as the report prints them. */
void name_slot(uint32_t slot, allocinfo_ptr_info *out)
{
	allocinfo_store_tag t;
	allocinfo_store_tag_ext ext;
	for (int tries = 0;; tries++) {
		uint32_t seq = __atomic_load_n(&g_store.tags[slot].seq, __ATOMIC_ACQUIRE);
		memcpy(&t, &g_store.tags[slot], sizeof(t));
		ext = g_store.ext[slot];
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		if (!(seq & 1) && seq == __atomic_load_n(&g_store.tags[slot].seq, __ATOMIC_RELAXED))
			break;
		if (tries == 100)
			return;
	}
	uint64_t used = __atomic_load_n(&g_store.hdr->strings_used, __ATOMIC_ACQUIRE);
	auto str = [used](uint32_t off) {
		return off && off < used ? std::string_view(g_store.strings + off) : std::string_view();
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
	name_tag(ts, (t.flags & ALLOCINFO_TAGF_DYNAMIC) ? own_symbolizer() : nullptr, row);
	out->line = row.line;
	copy(out->file, sizeof(out->file), row.file);
	copy(out->func, sizeof(out->func), row.func);
	copy(out->module, sizeof(out->module), row.module);
	copy(out->via, sizeof(out->via), row.via);
	copy(out->allocator, sizeof(out->allocator), row.allocator.empty() ? "malloc" : row.allocator);
}

} /* namespace */

extern "C" EXPORT int allocinfo_pointer_info(const void *ptr, struct allocinfo_ptr_info *out)
{
	if (!out) {
		errno = EINVAL;
		return -1;
	}
	memset(out, 0, sizeof(*out));
	uintptr_t p = (uintptr_t)ptr;
	if (__atomic_load_n(&g_fast.state, __ATOMIC_ACQUIRE) != STATE_RUNNING || p < PAGE) {
		errno = ENOENT;
		return -1;
	}
	busy_guard guard;
	object_info oi;
	if (describe_object(p, oi)) {	/* code or static data of a loaded object */
		errno = ENOENT;
		return -1;
	}
	found f;
	uintptr_t base = g_fast.small_base;
	int r = small::contains(ptr, base) ? in_small_heap(p, base, f) : in_glibc_heap(p, f);
	if (r != 0) {
		errno = ENOENT;
		return -1;
	}
	out->start = reinterpret_cast<const void *>(f.start);
	out->size = (size_t)f.size;
	name_slot(f.slot, out);
	return 0;
}
