/* SPDX-License-Identifier: MIT */
/*
 * Finding the live counted block that holds an address, from the layouts of a
 * block's record and of the small-block heap's slots: for the process itself
 * (allocinfo_pointer_info()) and for a reader looking into another process
 * (`allocinfo -p PID --addr`). Memory is read through a callback that fails instead
 * of faulting (process_vm_readv), so any address may be asked about.
 *
 * A small block's slot follows from its address (each size class has its own range)
 * and its trailer says whether it is live. A larger block has its 16-byte record in
 * front: 16-byte aligned candidates below the address are tried for up to 1 MiB, then
 * page starts (where glibc maps large blocks) for up to 256 MiB; a record is taken
 * only when glibc's chunk headers vouch for it (the chunk holds the record and the
 * block, and is in use). Over another allocator (a sanitizer's), every candidate of
 * the 256 MiB is tried and taken on its magic and tag alone. The first record found either covers the address or shows
 * that it lies in no counted block.
 */
#ifndef ALLOCINFO_BLOCK_FIND_H
#define ALLOCINFO_BLOCK_FIND_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "store_format.h"

namespace allocinfo {
namespace block_find {

/* The layouts (the library's static_asserts tie them to its own definitions). */
constexpr uint32_t MAGIC = 0xa11c0000u, MAGIC_MASK = 0xffff0000u;
constexpr uint32_t SHIFT_MASK = 0x0000ff00u, F_UNCOUNTED = 0x4u;
constexpr unsigned SMALL_CLASS_SHIFT = 28, SMALL_CLASSES = 64;
constexpr uint32_t SMALL_FREED = UINT32_MAX;
constexpr uintptr_t PAGE = 4096, SCAN_FINE = 1u << 20, SCAN_PAGES = 256u << 20;

struct record {
	uint64_t size;
	uint32_t counter;
	uint32_t meta;
};
struct trailer {
	uint32_t size;
	uint32_t counter;
};

/* What is known of the process. */
struct process_layout {
	uintptr_t small_base;	/* the small-block heap, or 0 / 1 << 63: none */
	uint32_t counter_mask;	/* (tag_capacity - 1) * 16 */
	uint32_t nr_tags;
	bool glibc_chunks;	/* glibc's allocator underneath: its headers are checked */
};

struct block {
	uintptr_t start;
	uint64_t size;
	uint32_t slot;
};

inline size_t small_usable(unsigned c) { return 24 + ((size_t)c << 4); }
inline size_t small_stride(unsigned c) { return small_usable(c) + 8; }

inline bool covers(uintptr_t start, uint64_t size, uintptr_t p)
{
	return p - start < size || (size == 0 && p == start);
}

inline bool counted_slot(const process_layout &l, uint32_t counter, uint32_t *slot)
{
	uint32_t s = (counter & l.counter_mask) >> 4;
	if (s < ALLOCINFO_TAG_FIRST || s >= l.nr_tags)
		return false;
	*slot = s;
	return true;
}

/* A record at rec that glibc's chunk headers vouch for. */
template <typename Read>
bool record_at(Read &read, const process_layout &l, uintptr_t rec, block &b)
{
	record r;
	if (!read(rec, &r, sizeof(r)) || (r.meta & MAGIC_MASK) != MAGIC || (r.meta & F_UNCOUNTED) ||
	    r.size > (1ull << 46))
		return false;
	uintptr_t start = rec + sizeof(record);
	uint32_t shift = (r.meta & SHIFT_MASK) >> 8;
	if (l.glibc_chunks) {
		/* glibc's pointer: the record's own place, or the aligned block's base. */
		uintptr_t gp = shift ? start - ((uintptr_t)1 << shift) : rec;
		uint64_t word, next;
		if (shift >= 48 || !read(gp - 8, &word, sizeof(word)))
			return false;
		uint64_t csize = word & ~(uint64_t)7, overhead = (word & 2) ? 16 : 8;
		if (csize < overhead || csize > (1ull << 46) || csize - overhead < start + r.size - gp)
			return false;
		if (!(word & 2) && (!read(gp - 16 + csize + 8, &next, sizeof(next)) || !(next & 1)))
			return false;	/* the next chunk says this one is free */
	}
	if (!counted_slot(l, r.counter, &b.slot))
		return false;
	b.start = start;
	b.size = r.size;
	return true;
}

/* The live counted block holding p: true and b filled, or false. */
template <typename Read>
bool find(Read &read, const process_layout &l, uintptr_t p, block &b)
{
	if (p < PAGE)
		return false;
	uintptr_t region = (uintptr_t)SMALL_CLASSES << SMALL_CLASS_SHIFT;
	if (l.small_base && p - l.small_base < region) {
		unsigned c = (unsigned)((p - l.small_base) >> SMALL_CLASS_SHIFT);
		uintptr_t in_class = (p - l.small_base) & (((uintptr_t)1 << SMALL_CLASS_SHIFT) - 1);
		uintptr_t start = p - in_class % small_stride(c);
		trailer t;
		if (!read(start + small_usable(c), &t, sizeof(t)) || t.size == SMALL_FREED ||
		    t.size > small_usable(c) || !covers(start, t.size, p) ||
		    !counted_slot(l, t.counter, &b.slot))
			return false;
		b.start = start;
		b.size = t.size;
		return true;
	}
	uintptr_t top = (p & ~(uintptr_t)15) - sizeof(record);
	/* Over another allocator, where large blocks lie is not known: all 16 by 16. */
	uintptr_t fine = l.glibc_chunks ? SCAN_FINE : SCAN_PAGES;
	uintptr_t bottom = top > fine + PAGE ? top - fine : PAGE;
	/* Page by page downwards; in each, the candidates whose magic is right. */
	alignas(16) char page[PAGE];
	for (uintptr_t pg = top & ~(PAGE - 1); pg + PAGE > bottom; pg -= PAGE) {
		if (!read(pg, page, PAGE))
			return false;	/* a block does not span a hole */
		uintptr_t from = pg == (top & ~(PAGE - 1)) ? top : pg + PAGE - 16;
		for (uintptr_t rec = from; rec >= pg && rec >= bottom; rec -= 16) {
			uint32_t meta;
			memcpy(&meta, page + (rec - pg) + offsetof(record, meta), sizeof(meta));
			if ((meta & MAGIC_MASK) == MAGIC && record_at(read, l, rec, b))
				return covers(b.start, b.size, p);
		}
		if (pg < 2 * PAGE)
			return false;
	}
	/* Larger blocks are glibc's mapped chunks: the record 16 bytes into a page. */
	for (uintptr_t pg = (bottom - 1) & ~(PAGE - 1);
	     l.glibc_chunks && pg + SCAN_PAGES > top && pg >= PAGE;
	     pg -= PAGE) {
		char probe;
		if (!read(pg, &probe, 1))
			return false;
		if (record_at(read, l, pg + 16, b))
			return covers(b.start, b.size, p);
	}
	return false;
}

} /* namespace block_find */
} /* namespace allocinfo */

#endif
