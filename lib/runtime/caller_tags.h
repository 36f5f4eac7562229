/* SPDX-License-Identifier: MIT */
/*
 * Dynamic tags for allocations that arrive with no current tag (uninstrumented code,
 * C++ new, libraries): one tag per distinct return address, named later from debug
 * info by whoever renders the report.
 *
 * The map from return address to slot is an open-addressing table read without
 * locks: an entry's slot is written before its key (release), and keys are never
 * changed except to a tombstone when their object is unloaded. It starts with 256
 * entries (a page) and doubles, up to CALLER_TABLE_SIZE, whenever it would be half
 * full, or a new key finds its probe window full before that: each caller touches the
 * page it hashes to, so a table of fixed size cost a process with a few hundred
 * callers most of a MiB. A new table is filled, then
 * published; the old one is kept as it was, so a reader still in it finds what it
 * held, or misses and takes the locked path, which looks in the new one. The number
 * of distinct callers is bounded; beyond the bound callers share the overflow tag.
 *
 * A key is a return address (its low 48 bits) and, above them, what the address
 * stands for: a return address inside a wrapper (declared, or the standard
 * libraries) has the key ra | CALLER_IN_WRAPPER, its mark, which the inline probe
 * never matches, so only allocations made inside wrappers pay for walking out of
 * them (walk_from()); the mark's walk word says how to step over the wrapper's
 * frame. The caller found has the key ra | via << 48, a tag of its own with a
 * " via:" token (via 0 for the standard libraries: the plain key). A tagged call
 * inside a wrapper keeps, under its tag's address with the top two bits set, where
 * its return address lies above the walker's frame.
 */
#ifndef ALLOCINFO_CALLER_TAGS_H
#define ALLOCINFO_CALLER_TAGS_H

#include "internal.h"

namespace allocinfo {

struct caller_entry {
	uintptr_t ra;		/* 0 empty, 1 tombstone */
	union {
		struct {
			uint32_t slot;
			uint32_t unused;
		};
		/* A wrapper's return address (ra | CALLER_IN_WRAPPER): how a walk steps
		 * over its frame, written whole (see walk_word()). */
		uint64_t walk;
	};
};

constexpr uint32_t CALLER_TABLE_BITS = 16;
constexpr uint32_t CALLER_TABLE_SIZE = 1u << CALLER_TABLE_BITS;	/* at most */
constexpr uint32_t CALLER_TABLE_FIRST = 256;
constexpr uint32_t CALLER_LIMIT = 16384;	/* distinct caller tags */
constexpr uint32_t CALLER_PROBES = 16;
constexpr uintptr_t CALLER_TOMBSTONE = 1;
constexpr uintptr_t CALLER_ADDR_MASK = (1ull << 48) - 1;
constexpr uintptr_t CALLER_IN_WRAPPER = 1ull << 63;
constexpr unsigned CALLER_VIA_SHIFT = 48;

struct caller_table {
	uint32_t mask;		/* entries - 1 */
	uint32_t used;		/* entries not empty, tombstones too (registry lock) */
	uint64_t reserved;
	caller_entry entries[];
};
static_assert(offsetof(caller_table, entries) == 16, "entries stay 16-byte aligned");

/* The current table's entries (its header lies just before them: the fast path
 * then indexes from the pointer it loads, with the mask at a fixed offset). */
extern caller_entry *g_callers HIDDEN;

static inline caller_table *caller_table_of(caller_entry *entries)
{
	return reinterpret_cast<caller_table *>(reinterpret_cast<char *>(entries) -
						offsetof(caller_table, entries));
}

static inline caller_table *caller_table_now()
{
	return caller_table_of(__atomic_load_n(&g_callers, __ATOMIC_ACQUIRE));
}

uint32_t caller_slot_slow(uintptr_t ra) HIDDEN;
/* The probes after the first, then caller_slot_slow(). */
uint32_t caller_slot_probe(uintptr_t ra) HIDDEN;
/* After a first probe that found e, not ra's entry: e is ra's wrapper mark (an
 * allocation inside a wrapper, walked out of at once), or caller_slot_probe(). ra
 * comes second, where the entry points that take a return address have it: the
 * inline probe then moves nothing. */
uint32_t caller_slot_miss(const caller_entry *e, uintptr_t ra) HIDDEN;

/* Fibonacci hashing of the address's low 32 bits, which tell callers apart (objects
 * 4 GiB apart that collide just probe on): a 32-bit multiply takes its constant as an
 * immediate operand, where the 64-bit one needs a register loaded first. A table
 * smaller than the largest uses the hash's low bits (its mask). */
static inline uint32_t caller_hash(uintptr_t ra)
{
	return ((uint32_t)ra * 0x9e3779b1u) >> (32 - CALLER_TABLE_BITS);
}

/* Entry i of the probe sequence of hash h. */
static inline caller_entry *caller_probe(caller_table *t, uint32_t h, uint32_t i)
{
	return &t->entries[(h + i) & t->mask];
}

/* The first probe inline: a caller is nearly always found where it hashes. */
static inline uint32_t caller_slot(uintptr_t ra)
{
	caller_entry *entries = __atomic_load_n(&g_callers, __ATOMIC_ACQUIRE);
	const caller_entry *e = entries + (caller_hash(ra) & caller_table_of(entries)->mask);
	if (likely(__atomic_load_n(&e->ra, __ATOMIC_ACQUIRE) == ra))
		return e->slot;
	return caller_slot_miss(e, ra);
}

/* An allocation made inside a declared wrapper, from return address known_ra (its
 * mark entry in hand, or null): the slot of its first caller outside every wrapper. */
uint32_t walk_from(uintptr_t known_ra, const caller_entry *entry) HIDDEN;
/* The same for a tagged call inside wrapper tag_via (its tag's address: tag). */
uint32_t wrapped_tag_slot(const void *tag, uint32_t tag_via) HIDDEN;
constexpr int CALLER_MAX_WALK = 64;	/* frames */

/* Start-up: maps the table. */
bool caller_tags_init() HIDDEN;
/* Registry lock held: forgets the callers in [lo, hi) (their object is gone). */
void caller_tags_forget(uintptr_t lo, uintptr_t hi) HIDDEN;

} /* namespace allocinfo */

#endif
