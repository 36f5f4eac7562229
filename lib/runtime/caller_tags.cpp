/* SPDX-License-Identifier: MIT */
/* Creation of caller tags on first sight of a return address. */
#include "caller_tags.h"

#include <string.h>
#include <sys/mman.h>

#include "frames.h"
#include "registry.h"
#include "store.h"
#include "wrappers.h"

namespace allocinfo {

caller_entry *g_callers;

namespace {

uint32_t g_nr_callers;	/* registry lock */

size_t table_bytes(uint32_t entries)
{
	return sizeof(caller_table) + (size_t)entries * sizeof(caller_entry);
}

caller_table *map_table(uint32_t entries)
{
	void *m = mmap(nullptr, table_bytes(entries), PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (m == MAP_FAILED)
		return nullptr;
	caller_table *t = static_cast<caller_table *>(m);
	t->mask = entries - 1;
	return t;
}

/* Copies t's entries into n, a larger table; false if one finds no room in its
 * probe window (the caller then tries a larger one). */
bool rehash_into(const caller_table *t, caller_table *n)
{
	for (uint32_t j = 0; j <= t->mask; j++) {
		const caller_entry &e = t->entries[j];
		if (e.ra <= CALLER_TOMBSTONE)
			continue;
		uint32_t h = caller_hash(e.ra);	/* a key's low 32 bits are its address's */
		uint32_t i = 0;
		while (i < CALLER_PROBES && caller_probe(n, h, i)->ra != 0)
			i++;
		if (i == CALLER_PROBES)
			return false;
		*caller_probe(n, h, i) = e;
		n->used++;
	}
	return true;
}

/* Registry lock held: the table doubles (or more, until every entry fits its probe
 * window). False when it cannot: the largest, or no memory. */
bool grow_table()
{
	caller_table *t = caller_table_of(g_callers);
	for (uint32_t grown = 2 * (t->mask + 1); grown <= CALLER_TABLE_SIZE; grown *= 2) {
		caller_table *n = map_table(grown);
		if (!n)
			return false;
		if (rehash_into(t, n)) {
			/* The old table stays as it is: a reader may still be between an
			 * entry's key and its slot there (emptying its pages charged such a
			 * call to slot 0). The old tables together are at most the new
			 * one's size. */
			__atomic_store_n(&g_callers, &n->entries[0], __ATOMIC_RELEASE);
			return true;
		}
		munmap(n, table_bytes(grown));
	}
	return false;
}

/* Registry lock held: the entry of key (hash h) in the current table, or the free one
 * it goes into; null when its probe window is full and the table cannot grow, and
 * the caller then shares the overflow tag. A table that would be half full doubles
 * first; so does one whose window for h is full before that (linear probing near
 * half full makes runs of CALLER_PROBES taken entries: 971 entries of 2,048 had one
 * in a test, and that call went to the overflow tag). */
caller_entry *entry_for(uintptr_t key, uint32_t h)
{
	caller_table *t = caller_table_of(g_callers);
	if (2 * (t->used + 1) > t->mask + 1 && grow_table())
		t = caller_table_of(g_callers);
	for (;;) {
		for (uint32_t i = 0; i < CALLER_PROBES; i++) {
			caller_entry *e = caller_probe(t, h, i);
			if (e->ra == key || e->ra == 0)
				return e;
		}
		if (!grow_table())
			return nullptr;
		t = caller_table_of(g_callers);
	}
}

} /* namespace */

bool caller_tags_init()
{
	caller_table *t = map_table(CALLER_TABLE_FIRST);
	if (!t)
		return false;
	g_callers = t->entries;
	return true;
}

uint32_t caller_slot_probe(uintptr_t ra)
{
	caller_table *t = caller_table_now();
	uint32_t h = caller_hash(ra);
	if (__atomic_load_n(&caller_probe(t, h, 0)->ra, __ATOMIC_ACQUIRE) == 0)
		return caller_slot_slow(ra);	/* entries fill in probe order */
	for (uint32_t i = 0; i < CALLER_PROBES; i++) {
		const caller_entry *e = caller_probe(t, h, i);
		uintptr_t key = __atomic_load_n(&e->ra, __ATOMIC_ACQUIRE);
		if (key == ra)
			return e->slot;
		if (key == (ra | CALLER_IN_WRAPPER))
			return walk_from(ra, e);	/* inside a wrapper: walk out */
		if (key == 0)
			break;
	}
	return caller_slot_slow(ra);
}

uint32_t caller_slot_miss(const caller_entry *e, uintptr_t ra)
{
	/* Inside a wrapper, where it hashes: nearly every allocation of the C++
	 * standard library's comes here, and walks out at once. */
	if (__atomic_load_n(&e->ra, __ATOMIC_ACQUIRE) == (ra | CALLER_IN_WRAPPER))
		return walk_from(ra, e);
	return caller_slot_probe(ra);
}

namespace {

/* The slot of key (a caller's return address ra, and what it stands for), creating
 * its caller tag on first sight. */
uint32_t slot_for_key(uintptr_t key, uintptr_t ra, uint32_t via)
{
	uint32_t h = caller_hash(ra);
	caller_table *t = caller_table_now();
	for (uint32_t i = 0; i < CALLER_PROBES; i++) {
		const caller_entry *e = caller_probe(t, h, i);
		uintptr_t k = __atomic_load_n(&e->ra, __ATOMIC_ACQUIRE);
		if (k == key)
			return e->slot;
		if (k == 0)
			break;
	}
	if (in_fork_window())
		return overflow_slot();	/* named on a later call */
	busy_guard guard;
	object_info_block oi;
	if (!oi)
		return overflow_slot();	/* named on a later call */
	if (!module_lookup_rcu(ra, *oi) && !describe_object(ra, *oi)) {
		*oi = object_info();
		strcpy(oi->path, "??");
	}

	registry_lock();
	caller_entry *e = entry_for(key, h);
	uint32_t slot = 0;
	if (!e) {
		/* The largest table's probe window is full: share the overflow tag,
		 * remember nothing. */
		slot = overflow_slot();
	} else if (e->ra == key) {
		slot = e->slot;
	} else {
		if (g_nr_callers < CALLER_LIMIT)
			slot = slot_alloc();
		if (slot) {
			module *m = module_get(*oi);
			uint32_t via_off = via ? store_intern(wrapper_name(via)) : 0;
			store_publish_tag(slot, ALLOCINFO_TAGF_DYNAMIC, 0, 0, module_path_off(m), 0,
					  (uint64_t)(ra - oi->l_addr), via_off);
			module_add_slot(m, slot);
			g_nr_callers++;
		} else {
			slot = overflow_slot();
		}
		/* Remember it, even as the overflow tag, so the next call is a lookup. */
		e->slot = slot;
		__atomic_store_n(&e->ra, key, __ATOMIC_RELEASE);
		caller_table_of(g_callers)->used++;
	}
	registry_unlock();
	return slot;
}

} /* namespace */

namespace {

/* A wrapper frame's walk word: the step to the next return address's slot, where the
 * slot of an entry point's return address lies above walk_from()'s frame, and the
 * wrapper. */
constexpr uint64_t walk_word(uint32_t step, uint32_t entry_offset, uint32_t via)
{
	return step | (uint64_t)(entry_offset & 0xffff) << 32 | (uint64_t)(via & 0x7fff) << 48;
}
constexpr uint32_t walk_step(uint64_t w) { return (uint32_t)w; }
constexpr uint32_t WALK_STEP_VARIES = 1u << 31;	/* beyond WALK_MAX_STACK */
constexpr uint32_t walk_entry_offset(uint64_t w) { return (uint32_t)(w >> 32) & 0xffff; }
constexpr uint32_t walk_via(uint64_t w) { return (uint32_t)(w >> 48) & 0x7fff; }

/* Marks ra as a wrapper's return address, or updates its walk word (an entry offset
 * of 0 keeps the one known). */
void remember_wrapper(uintptr_t ra, uint64_t w)
{
	if (in_fork_window())
		return;
	uintptr_t key = ra | CALLER_IN_WRAPPER;
	uint32_t h = caller_hash(ra);
	registry_lock();
	caller_entry *e = entry_for(key, h);
	if (e && e->ra == key) {
		if (!walk_entry_offset(w))
			w |= (uint64_t)walk_entry_offset(e->walk) << 32;
		/* A frame whose size differs between walks (alloca) is always unwound:
		 * its step becomes one no walk takes. */
		uint32_t was = walk_step(e->walk);
		if (was == WALK_STEP_VARIES || (was && was != walk_step(w)))
			w = (w & ~0xffffffffull) | WALK_STEP_VARIES;
		__atomic_store_n(&e->walk, w, __ATOMIC_RELAXED);
	} else if (e) {
		__atomic_store_n(&e->walk, w, __ATOMIC_RELAXED);
		__atomic_store_n(&e->ra, key, __ATOMIC_RELEASE);
		caller_table_of(g_callers)->used++;
	}
	registry_unlock();
}

/* Where a tagged call's return address lies above tag_walk()'s frame: an entry
 * keyed by the tag's address, its slot field the offset. */
constexpr uintptr_t CALLER_TAG_KEY = 3ull << 62;	/* no mark (1 << 63 alone) nor caller */

void remember_tag_offset(const void *tag, uint32_t offset)
{
	if (in_fork_window() || !offset)
		return;
	uintptr_t key = ((uintptr_t)tag & CALLER_ADDR_MASK) | CALLER_TAG_KEY;
	uint32_t h = caller_hash((uintptr_t)tag);
	registry_lock();
	if (caller_entry *e = entry_for(key, h)) {
		caller_table_of(g_callers)->used += e->ra == 0;
		__atomic_store_n(&e->slot, offset, __ATOMIC_RELAXED);
		__atomic_store_n(&e->ra, key, __ATOMIC_RELEASE);
	}
	registry_unlock();
}

/* The unwinder's walk, kept in the table for the next ones. A tagged call (known_ra
 * 0) is charged with tag_via when no frame names a wrapper (it was inlined). */
[[gnu::noinline]] uint32_t learn_walk(uintptr_t known_ra, uintptr_t base,
				      const void *tag = nullptr, uint32_t tag_via = 0)
{
	unwound_path p;
	if (!unwind_from(known_ra, base, p)) {
		if (!known_ra)
			return overflow_slot();
		/* No way out: charged to the wrapper's own line, with its name. */
		uint32_t via = wrapper_at(known_ra - 1);
		if (via == WRAPPER_TRANSPARENT)
			via = 0;
		return slot_for_key((known_ra & CALLER_ADDR_MASK) | (uintptr_t)via << CALLER_VIA_SHIFT,
				    known_ra, via);
	}
	for (int i = 0; i < p.nr; i++)
		remember_wrapper(p.frames[i].ra, walk_word(p.frames[i].step,
							   i == 0 && known_ra ? p.entry_offset : 0,
							   p.frames[i].via));
	if (tag)
		remember_tag_offset(tag, p.entry_offset);
	uint32_t via = p.caller.via ? p.caller.via : tag_via;
	if (via == WRAPPER_TRANSPARENT)
		via = 0;
	return slot_for_key((p.caller.ra & CALLER_ADDR_MASK) | (uintptr_t)via << CALLER_VIA_SHIFT,
			    p.caller.ra, via);
}

} /* namespace */

/*
 * An allocation whose return address known_ra is a wrapper's (entry: its mark, or
 * null). Known frames are stepped over with the walk words of the table: from this
 * function's frame to known_ra's slot (checked: it must hold known_ra), then from slot
 * to slot, each return address found by one probe, until a caller outside; anything
 * unknown, or not as remembered, is unwound and learnt.
 */
namespace {

/* From the slot of a wrapper's return address, whose walk word is w, up: the caller's
 * slot, or 0 when a frame is not known. */
inline uint32_t step_out(uintptr_t last, uintptr_t slot, uint64_t w, uint32_t via)
{
	for (int depth = 0; depth < CALLER_MAX_WALK; depth++) {
		uint32_t step = walk_step(w);
		if (!step)
			break;
		slot += step;
		if (slot > last)	/* stack_last_word() */
			break;
		uintptr_t ra = *(const uintptr_t *)slot;
		uintptr_t want = (ra & CALLER_ADDR_MASK) | (uintptr_t)via << CALLER_VIA_SHIFT;
		uintptr_t mark = ra | CALLER_IN_WRAPPER;
		uint32_t h = caller_hash(ra);
		caller_table *t = caller_table_now();
		const caller_entry *next = nullptr;
		for (uint32_t i = 0; i < CALLER_PROBES; i++) {
			const caller_entry *e = caller_probe(t, h, i);
			uintptr_t key = __atomic_load_n(&e->ra, __ATOMIC_ACQUIRE);
			if (key == want)
				return e->slot;
			if (key == mark) {
				next = e;
				break;
			}
			if (key == 0)
				break;
		}
		if (!next)
			break;
		w = __atomic_load_n(&next->walk, __ATOMIC_RELAXED);
		uint32_t v = walk_via(w);
		if (v && v != WRAPPER_TRANSPARENT)
			via = v;
	}
	return 0;
}

/* A named wrapper's id, 0 for none or a transparent one. */
inline uint32_t named(uint32_t via)
{
	return via == WRAPPER_TRANSPARENT ? 0 : via;
}

} /* namespace */

[[gnu::noinline]] uint32_t walk_from(uintptr_t known_ra, const caller_entry *entry)
{
	uintptr_t base = (uintptr_t)__builtin_frame_address(0);
	if (entry) {
		uint64_t w = __atomic_load_n(&entry->walk, __ATOMIC_RELAXED);
		uint32_t off = walk_entry_offset(w);
		uintptr_t slot = base + off;
		uintptr_t last = stack_last_word(base);
		if (off && slot <= last && *(const uintptr_t *)slot == known_ra)
			if (uint32_t s = step_out(last, slot, w, named(walk_via(w))))
				return s;
	}
	return learn_walk(known_ra, base);
}

/*
 * A tagged call inside a declared wrapper: the tag's entry says where the return
 * address into the program lies above this frame; what it holds is looked up (a
 * wrapper's mark, or the caller itself when the wrapper was inlined into it).
 */
[[gnu::noinline]] static uint32_t tag_walk(const void *tag, uint32_t tag_via)
{
	uintptr_t base = (uintptr_t)__builtin_frame_address(0);
	uintptr_t key = ((uintptr_t)tag & CALLER_ADDR_MASK) | CALLER_TAG_KEY;
	uint32_t h = caller_hash((uintptr_t)tag), off = 0;
	caller_table *t = caller_table_now();
	for (uint32_t i = 0; i < CALLER_PROBES; i++) {
		const caller_entry *e = caller_probe(t, h, i);
		uintptr_t k = __atomic_load_n(&e->ra, __ATOMIC_ACQUIRE);
		if (k == key) {
			off = __atomic_load_n(&e->slot, __ATOMIC_RELAXED);
			break;
		}
		if (k == 0)
			break;
	}
	uintptr_t last = stack_last_word(base);
	if (off && base + off <= last) {
		uintptr_t slot = base + off, ra = *(const uintptr_t *)slot;
		uintptr_t want = (ra & CALLER_ADDR_MASK) | (uintptr_t)named(tag_via) << CALLER_VIA_SHIFT;
		uintptr_t mark = ra | CALLER_IN_WRAPPER;
		uint32_t hr = caller_hash(ra);
		for (uint32_t i = 0; i < CALLER_PROBES; i++) {
			const caller_entry *e = caller_probe(t, hr, i);
			uintptr_t k = __atomic_load_n(&e->ra, __ATOMIC_ACQUIRE);
			if (k == want)
				return e->slot;
			if (k == mark) {
				uint64_t w = __atomic_load_n(&e->walk, __ATOMIC_RELAXED);
				uint32_t via = named(walk_via(w)) ? named(walk_via(w)) : named(tag_via);
				if (uint32_t s = step_out(last, slot, w, via))
					return s;
				break;
			}
			if (k == 0)
				break;
		}
	}
	return learn_walk(0, base, tag, tag_via);
}

uint32_t caller_slot_slow(uintptr_t ra)
{
	if (wrappers_declared() && !in_fork_window()) {
		busy_guard guard;
		if (wrapper_at(ra - 1))
			return walk_from(ra, nullptr);
	}
	return slot_for_key(ra, ra, 0);
}

uint32_t wrapped_tag_slot(const void *tag, uint32_t tag_via)
{
	return tag_walk(tag, tag_via);
}

void caller_tags_forget(uintptr_t lo, uintptr_t hi)
{
	caller_table *t = caller_table_of(g_callers);
	for (uint32_t i = 0; i <= t->mask; i++) {
		caller_entry *e = &t->entries[i];
		uintptr_t addr = e->ra & CALLER_ADDR_MASK;
		if (addr >= lo && addr < hi && e->ra > CALLER_TOMBSTONE)	/* tags' keys too */
			__atomic_store_n(&e->ra, CALLER_TOMBSTONE, __ATOMIC_RELEASE);
	}
}

} /* namespace allocinfo */
