/* SPDX-License-Identifier: MIT */
/* Creation of caller tags on first sight of a return address. */
#include "caller_tags.h"

#include <string.h>
#include <sys/mman.h>

#include "registry.h"
#include "store.h"

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
	for (uint32_t i = 1; i < CALLER_PROBES; i++) {
		const caller_entry *e = &g_callers[(h + i) & (CALLER_TABLE_SIZE - 1)];
		uintptr_t key = __atomic_load_n(&e->ra, __ATOMIC_ACQUIRE);
		if (key == ra)
			return e->slot;
		if (key == 0)
			break;
	}
	return caller_slot_slow(ra);
}

uint32_t caller_slot_slow(uintptr_t ra)
{
	if (in_fork_window())
		return overflow_slot();	/* named on a later call */
	busy_guard guard;
	object_info oi;
	if (!module_lookup_rcu(ra, oi) && !describe_object(ra, oi)) {
		oi = object_info();
		strcpy(oi.path, "??");
	}

	registry_lock();
	uint32_t h = caller_hash(ra), slot = 0;
	caller_entry *free_entry = nullptr;
	for (uint32_t i = 0; i < CALLER_PROBES; i++) {
		caller_entry *e = &g_callers[(h + i) & (CALLER_TABLE_SIZE - 1)];
		if (e->ra == ra) {
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
		if (g_nr_callers < CALLER_LIMIT)
			slot = slot_alloc();
		if (slot) {
			module *m = module_get(oi);
			store_publish_tag(slot, ALLOCINFO_TAGF_DYNAMIC, 0, 0, module_path_off(m), 0,
					  (uint64_t)(ra - oi.l_addr));
			module_add_slot(m, slot);
			g_nr_callers++;
		} else {
			slot = overflow_slot();
		}
		/* Remember it, even as the overflow tag, so the next call is a lookup. */
		free_entry->slot = slot;
		__atomic_store_n(&free_entry->ra, ra, __ATOMIC_RELEASE);
	}
	registry_unlock();
	return slot;
}

void caller_tags_forget(uintptr_t lo, uintptr_t hi)
{
	for (uint32_t i = 0; i < CALLER_TABLE_SIZE; i++) {
		caller_entry *e = &g_callers[i];
		if (e->ra >= lo && e->ra < hi && e->ra > CALLER_TOMBSTONE)
			__atomic_store_n(&e->ra, CALLER_TOMBSTONE, __ATOMIC_RELEASE);
	}
}

} /* namespace allocinfo */
