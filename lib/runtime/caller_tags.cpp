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
}

bool caller_tags_init()
{
	void *m = mmap(nullptr, sizeof(caller_entry) * CALLER_TABLE_SIZE, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (m == MAP_FAILED)
		return false;
	g_callers = static_cast<caller_entry *>(m);
	return true;
}

uint32_t caller_slot_probe(uintptr_t ra)
{
	uint32_t h = caller_hash(ra);
	if (__atomic_load_n(&g_callers[h].ra, __ATOMIC_ACQUIRE) == 0)
		return caller_slot_slow(ra);	/* entries fill in probe order */
	for (uint32_t i = 0; i < CALLER_PROBES; i++) {
		const caller_entry *e = &g_callers[(h + i) & (CALLER_TABLE_SIZE - 1)];
		uintptr_t key = __atomic_load_n(&e->ra, __ATOMIC_ACQUIRE);
		if (key == ra)
			return e->slot;
		if (key == (ra | CALLER_IN_WRAPPER))
			return wrapped_caller_slot(ra, 0);
		if (key == 0)
			break;
	}
	return caller_slot_slow(ra);
}

namespace {

/* The slot of key (a caller's return address ra, and what it stands for), creating
 * its caller tag on first sight. */
uint32_t slot_for_key(uintptr_t key, uintptr_t ra, uint32_t via)
{
	uint32_t h = caller_hash(ra);
	for (uint32_t i = 0; i < CALLER_PROBES; i++) {
		const caller_entry *e = &g_callers[(h + i) & (CALLER_TABLE_SIZE - 1)];
		uintptr_t k = __atomic_load_n(&e->ra, __ATOMIC_ACQUIRE);
		if (k == key)
			return e->slot;
		if (k == 0)
			break;
	}
	if (in_fork_window())
		return overflow_slot();	/* named on a later call */
	busy_guard guard;
	object_info oi;
	if (!module_lookup_rcu(ra, oi) && !describe_object(ra, oi)) {
		oi = object_info();
		strcpy(oi.path, "??");
	}

	registry_lock();
	uint32_t slot = 0;
	caller_entry *free_entry = nullptr;
	for (uint32_t i = 0; i < CALLER_PROBES; i++) {
		caller_entry *e = &g_callers[(h + i) & (CALLER_TABLE_SIZE - 1)];
		if (e->ra == key) {
			slot = e->slot;
			break;
		}
		if (e->ra == 0) {
			free_entry = e;
			break;
		}
	}
	if (!slot && !free_entry) {
		/* The probe window is full: share the overflow tag, remember nothing. */
		slot = overflow_slot();
	} else if (!slot) {
		if (key & CALLER_IN_WRAPPER) {
			slot = ALLOCINFO_TAG_NONE;	/* a mark, never a slot */
		} else {
			if (g_nr_callers < CALLER_LIMIT)
				slot = slot_alloc();
			if (slot) {
				module *m = module_get(oi);
				uint32_t via_off = via ? store_intern(wrapper_name(via)) : 0;
				store_publish_tag(slot, ALLOCINFO_TAGF_DYNAMIC, 0, 0,
						  module_path_off(m), 0, (uint64_t)(ra - oi.l_addr),
						  via_off);
				module_add_slot(m, slot);
				g_nr_callers++;
			} else {
				slot = overflow_slot();
			}
		}
		/* Remember it, even as the overflow tag, so the next call is a lookup. */
		free_entry->slot = slot;
		__atomic_store_n(&free_entry->ra, key, __ATOMIC_RELEASE);
	}
	registry_unlock();
	return slot;
}

} /* namespace */

uint32_t caller_slot_slow(uintptr_t ra)
{
	if (wrappers_declared() && !in_fork_window()) {
		busy_guard guard;
		if (wrapper_at(ra - 1)) {
			slot_for_key(ra | CALLER_IN_WRAPPER, ra, 0);
			return wrapped_caller_slot(ra, 0);
		}
	}
	return slot_for_key(ra, ra, 0);
}

uint32_t wrapped_caller_slot(uintptr_t known_ra, uint32_t tag_via)
{
	wrapped_caller wc;
	if (!find_wrapped_caller(known_ra, wc)) {
		/* No way out of the wrapper: charged to the wrapper's own line. */
		if (!known_ra)
			return overflow_slot();
		wc.ra = known_ra;
		wc.via = 0;
	}
	uint32_t via = wc.via ? wc.via : tag_via;
	if (via == WRAPPER_TRANSPARENT)
		via = 0;	/* the standard libraries leave no token */
	return slot_for_key((wc.ra & CALLER_ADDR_MASK) | (uintptr_t)via << CALLER_VIA_SHIFT,
			    wc.ra, via);
}

void caller_tags_forget(uintptr_t lo, uintptr_t hi)
{
	for (uint32_t i = 0; i < CALLER_TABLE_SIZE; i++) {
		caller_entry *e = &g_callers[i];
		uintptr_t addr = e->ra & CALLER_ADDR_MASK;
		if (addr >= lo && addr < hi && e->ra > CALLER_TOMBSTONE)
			__atomic_store_n(&e->ra, CALLER_TOMBSTONE, __ATOMIC_RELEASE);
	}
}

} /* namespace allocinfo */
