/* SPDX-License-Identifier: MIT */
/*
 * The tag registry: which ELF objects hold call sites, which store slot each tag
 * has, and what happens when an object is unloaded.
 *
 * Locking: registry_lock (a mutex) serialises every writer: slot allocation, store
 * writes, module list changes and caller-table inserts. The module list is also
 * readable without it (module_lookup_rcu: atomic links, and records freed only once
 * no lookup is under way), so looking an address up never waits for a writer or a
 * dlopen. Lock order: the dynamic loader's locks may be held when the registry
 * lock is taken (constructors run inside dlopen), never the reverse: nothing calls
 * into the loader (dl_iterate_phdr, dladdr) with the registry lock held.
 */
#ifndef ALLOCINFO_REGISTRY_H
#define ALLOCINFO_REGISTRY_H

#include <limits.h>
#include <stdlib.h>

#include <new>

#include "internal.h"

namespace allocinfo {

/* An ELF object as the loader describes it. */
struct object_info {
	uintptr_t l_addr = 0;	/* load bias: runtime address - link-time address */
	uintptr_t lo = 0, hi = 0;	/* extent of its PT_LOAD segments */
	char path[PATH_MAX] = "";
};

/*
 * An object_info in a block of the library's own (inside a busy_guard), for the
 * paths of a thread's first allocations: a new call site, tag or object. On the
 * stack its PATH_MAX path is a quarter of a PTHREAD_STACK_MIN thread's stack, and
 * those paths run on top of a walk, with the program's frames below. False when
 * there is no memory.
 */
class object_info_block {
public:
	object_info_block()
	{
		void *m = malloc(sizeof(object_info));
		p_ = m ? new (m) object_info() : nullptr;
	}
	~object_info_block() { free(p_); }	/* trivially destructible */
	object_info_block(const object_info_block &) = delete;
	object_info_block &operator=(const object_info_block &) = delete;
	explicit operator bool() const { return p_ != nullptr; }
	object_info &operator*() const { return *p_; }
	object_info *operator->() const { return p_; }

private:
	object_info *p_;
};

/* Finds the loaded object containing addr; false if none does (JIT code, say). */
bool describe_object(uintptr_t addr, object_info &out) HIDDEN;

/* Finds an already known object by address without the loader's locks or the
 * registry lock; fills l_addr, lo and hi. */
bool module_lookup_rcu(uintptr_t addr, object_info &oi) HIDDEN;

void registry_lock() HIDDEN;
void registry_unlock() HIDDEN;

/* Fast-path miss: gives tag t a slot (or the overflow slot) and returns it. */
uint32_t register_tag(const alloc_tag *t) HIDDEN;

/* Under the registry lock: the module record for an object (created on first use),
 * a fresh slot (0 when the store is full), and tag bookkeeping. */
struct module;
module *module_get(const object_info &oi) HIDDEN;
uint32_t module_path_off(const module *m) HIDDEN;
void module_add_slot(module *m, uint32_t slot) HIDDEN;
uint32_t slot_alloc() HIDDEN;

/* The slot charged when the store or the caller table is full. */
uint32_t overflow_slot() HIDDEN;

/* True while fork() holds the registry's locks: slow paths must not wait then. */
bool in_fork_window() HIDDEN;

/* After dlclose: objects that are gone get their tags marked unloaded. */
void scan_unloaded() HIDDEN;
/* Frees the slots of unloaded tags whose counters came back to zero. */
void reclaim_unloaded() HIDDEN;

/* Start-up (after the store exists) and fork handling. */
void registry_init() HIDDEN;
void registry_fork_prepare() HIDDEN;
void registry_fork_parent() HIDDEN;
void registry_fork_child() HIDDEN;

} /* namespace allocinfo */

#endif
