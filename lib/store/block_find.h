/* SPDX-License-Identifier: MIT */
/*
 * Finding the live counted block that holds an address, from the layouts of a
 * block's record and of the small-block heap's slots: for the process itself
 * (allocinfo_pointer_info()) and for a reader looking into another process
 * (`allocinfo -p PID --addr`). Memory is read through a callback that fails instead
 * of faulting (process_vm_readv), so any address may be asked about.
 *
 * A small block's slot follows from its address: the heap is cut into 16 KiB spans, the
 * class of each span is one byte of a table that ends at the heap's base, and the
 * slot's trailer says whether it is live (its first 4 bytes are 0 once freed). A
 * larger block has its 16-byte record in front: 16-byte aligned candidates below
 * the address are tried for up to 1 MiB, then page starts (where glibc maps large
 * blocks) for up to 256 MiB; a record is taken only when glibc's chunk headers vouch
 * for it (the chunk holds the record and the block, and is in use). Over another
 * allocator (jemalloc, a sanitizer's), every candidate of the 256 MiB is tried and
 * taken on its magic and tag alone. The first record found
 * either covers the address or shows that it lies in no counted block.
 *
 * Over glibc a block aligned to 64 bytes or more may keep its record in its last 16
 * bytes instead (a tail record, lib/runtime/alloc.cpp): at each 64-byte aligned
 * candidate start passed on the way down whose glibc chunk reaches the address, the
 * chunk's last 16 bytes are tried too (with the process's key, its check as well).
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
constexpr unsigned SMALL_SPAN_SHIFT = 14, SMALL_CLASSES = 64;
constexpr uintptr_t SMALL_MAX_SPANS = (uintptr_t)1 << 18;	/* the class table's length */
constexpr uint32_t SMALL_FREED = 0;	/* a free slot's trailer's first 4 bytes */
constexpr uintptr_t PAGE = 4096, SCAN_FINE = 1u << 20, SCAN_PAGES = 256u << 20;
constexpr uintptr_t TAIL_ALIGN = 64;
constexpr unsigned TAIL_CHECK_SHIFT = 48;
/* glibc's chunk size word, just below the pointer it hands out: its low bits. */
constexpr uint64_t CHUNK_PREV_INUSE = 1, CHUNK_IS_MMAPPED = 2, CHUNK_FLAGS = 7;

struct record {
	uint64_t size;
	uint32_t counter;
	uint32_t meta;
};
struct tail_record {
	uint64_t size_check;	/* size, and a check of the start in the top 16 bits */
	uint32_t counter;
	uint32_t meta;
};
struct trailer {
	uint16_t check;		/* the process's canary while live, 0 once freed */
	uint16_t size;
	uint32_t counter;
};

/* What is known of the process. */
struct process_layout {
	uintptr_t small_base;	/* the small-block heap, or 0: none */
	uintptr_t small_len;	/* bytes of it mapped */
	uint32_t small_check;	/* a live trailer's check, or 0: any but 0 */
	uint32_t counter_mask;	/* (tag_capacity - 1) * 16 */
	uint32_t nr_tags;
	bool glibc_chunks;	/* glibc's allocator underneath: its headers are checked */
	bool tail_key_known;	/* tail records' checks can be checked, with tail_key */
	uint64_t tail_key;
};

struct block {
	uintptr_t start;
	uint64_t size;
	uint32_t slot;
};

constexpr size_t small_usable(unsigned c) { return 24 + ((size_t)c << 4); }
constexpr size_t small_stride(unsigned c) { return small_usable(c) + 8; }
constexpr uintptr_t small_slots(unsigned c)
{
	return ((uintptr_t)1 << SMALL_SPAN_SHIFT) / small_stride(c);
}

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
		uint64_t csize = word & ~CHUNK_FLAGS, overhead = (word & CHUNK_IS_MMAPPED) ? 16 : 8;
		if (csize < overhead || csize > (1ull << 46) || csize - overhead < start + r.size - gp)
			return false;
		if (!(word & CHUNK_IS_MMAPPED) &&
		    (!read(gp - 16 + csize + 8, &next, sizeof(next)) || !(next & CHUNK_PREV_INUSE)))
			return false;	/* the next chunk says this one is free */
	}
	if (!counted_slot(l, r.counter, &b.slot))
		return false;
	b.start = start;
	b.size = r.size;
	return true;
}

/* alloc.cpp's check of a tail record at block start s. */
constexpr uint64_t tail_check(uintptr_t s, uint64_t key)
{
	uint64_t x = (uint64_t)s ^ key ^ 0x7a11ed5afe7a11edull;
	x ^= x >> 32;
	x ^= x >> 16;
	return (x & 0xffff) << TAIL_CHECK_SHIFT;
}

/* A block starting at s (64-byte aligned) whose glibc chunk, with size word `word`,
 * reaches p and ends in a live tail record. */
template <typename Read>
bool tail_at(Read &read, const process_layout &l, uintptr_t s, uint64_t word, uintptr_t p,
	     block &b)
{
	uint64_t csize = word & ~CHUNK_FLAGS, overhead = (word & CHUNK_IS_MMAPPED) ? 16 : 8;
	if (csize < 32 || (csize & 15) || csize > (1ull << 46) || s + (csize - overhead) <= p)
		return false;
	uint64_t usable = csize - overhead;
	tail_record t;
	if (!read(s + usable - sizeof(t), &t, sizeof(t)) || (t.meta & MAGIC_MASK) != MAGIC ||
	    (t.meta & F_UNCOUNTED))
		return false;
	uint64_t size = t.size_check & (((uint64_t)1 << TAIL_CHECK_SHIFT) - 1);
	if (size > usable - sizeof(t) ||
	    (l.tail_key_known && (t.size_check & ~(((uint64_t)1 << TAIL_CHECK_SHIFT) - 1)) !=
					 tail_check(s, l.tail_key)))
		return false;
	uint64_t next;
	if (!(word & CHUNK_IS_MMAPPED) &&
	    (!read(s - 16 + csize + 8, &next, sizeof(next)) || !(next & CHUNK_PREV_INUSE)))
		return false;	/* the next chunk says this one is free */
	if (!counted_slot(l, t.counter, &b.slot))
		return false;
	b.start = s;
	b.size = size;
	return true;
}

/* The live counted block holding p: true and b filled, or false. */
template <typename Read>
bool find(Read &read, const process_layout &l, uintptr_t p, block &b)
{
	if (p < PAGE)
		return false;
	if (l.small_base && p - l.small_base < l.small_len) {
		uintptr_t off = p - l.small_base;
		uintptr_t span = off >> SMALL_SPAN_SHIFT;
		uint8_t c;
		if (span >= SMALL_MAX_SPANS ||
		    !read(l.small_base - SMALL_MAX_SPANS + span, &c, sizeof(c)) || c >= SMALL_CLASSES)
			return false;	/* a span in the pool, or never handed out */
		uintptr_t in_span = off & (((uintptr_t)1 << SMALL_SPAN_SHIFT) - 1);
		uintptr_t k = in_span / small_stride(c);
		if (k >= small_slots(c))
			return false;	/* the few bytes past a span's last slot */
		uintptr_t start = p - in_span % small_stride(c);
		trailer t;
		if (!read(start + small_usable(c), &t, sizeof(t)) || t.check == SMALL_FREED ||
		    (l.small_check && t.check != l.small_check) || t.size > small_usable(c) ||
		    !covers(start, t.size, p) || !counted_slot(l, t.counter, &b.slot))
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
			uint64_t word;
			if (l.glibc_chunks && !((rec + sizeof(record)) & (TAIL_ALIGN - 1))) {
				memcpy(&word, page + (rec - pg) + 8, sizeof(word));
				if (tail_at(read, l, rec + sizeof(record), word, p, b))
					return covers(b.start, b.size, p);
			}
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
		uint64_t word;	/* an aligned mapped chunk: its tail record */
		if (read(pg - 8, &word, sizeof(word)) && tail_at(read, l, pg, word, p, b))
			return covers(b.start, b.size, p);
	}
	return false;
}

} /* namespace block_find */
} /* namespace allocinfo */

#endif
