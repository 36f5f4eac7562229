/* SPDX-License-Identifier: MIT */
/*
 * Allocators of the program's own (pools, arenas), in the kernel's shape: a named
 * allocator object, and charge/uncharge calls that count a block against the
 * current tag, so that
 *
 *     #define pool_alloc(...) alloc_hooks(pool_alloc_noprof(__VA_ARGS__))
 *
 * counts each pool block at the line that asked for it, with an " allocator:NAME"
 * token. Nothing is written into the pool's blocks: a side index, a hash map keyed by
 * start address, remembers each charged block's size and tag slot until it is
 * uncharged (and answers allocinfo_pointer_info() for them: a pointer inside a block,
 * rather than at its start, is looked for through every entry). A tag and an
 * allocator together get a slot of their own: the tag's site, with the token.
 */
#include <errno.h>
#include <pthread.h>
#include <string.h>

#include "alloc.h"
#include "allocators.h"
#include "plain_map.h"
#include "store.h"

using namespace allocinfo;

struct allocinfo_allocator {
	uint32_t id;		/* 1 and up */
	uint32_t name_off;	/* in the store's strings */
	char name[64];
};

namespace {

constexpr uint32_t MAX_ALLOCATORS = 256;

/* Allocators, and the slots of (tag slot, allocator) pairs: registry lock. */
allocinfo_allocator *g_allocators[MAX_ALLOCATORS + 1];
uint32_t g_nr_allocators;
plain_map<uint32_t> *g_pair_slots;

/* The side index of charged blocks. */
struct charged {
	uint64_t size;
	uint32_t slot;
	uint32_t allocator;
};
pthread_mutex_t g_index_lock = PTHREAD_MUTEX_INITIALIZER;
plain_map<charged> *g_index;	/* by start address */

bool running()
{
	return __atomic_load_n(&g_fast.state, __ATOMIC_ACQUIRE) == STATE_RUNNING;
}

/* Registry lock held: the slot of `slot`'s site with allocator a's token. */
uint32_t pair_slot(uint32_t slot, const allocinfo_allocator *a)
{
	uint64_t key = (uint64_t)slot << 32 | a->id;
	if (uint32_t *known = g_pair_slots->find(key))
		return *known;
	uint32_t pair = slot_alloc();
	if (!pair) {
		pair = overflow_slot();
	} else {
		const allocinfo_store_tag &t = g_store.tags[slot];
		store_publish_tag(pair, t.flags & ~ALLOCINFO_TAGF_USED, t.file_off, t.func_off,
				  t.module_off, t.line, t.addr, g_store.ext[slot].via_off, a->name_off);
	}
	(void)g_pair_slots->insert(key, pair);	/* without memory, found again next time */
	return pair;
}

} /* namespace */

bool allocinfo::allocators_find(uintptr_t p, allocator_block &out)
{
	if (!g_index)
		return false;
	pthread_mutex_lock(&g_index_lock);
	bool found = false;
	auto take = [&](uint64_t start, const charged &b) {
		if (p - start < b.size || (b.size == 0 && p == start)) {
			out.start = (uintptr_t)start;
			out.size = b.size;
			out.slot = b.slot;
			found = true;
		}
	};
	if (const charged *c = g_index->find(p))
		take(p, *c);
	else
		g_index->for_each([&](uint64_t start, const charged &b) {
			if (!found)
				take(start, b);
		});
	pthread_mutex_unlock(&g_index_lock);
	return found;
}

extern "C" EXPORT struct allocinfo_allocator *allocinfo_allocator_create(const char *name)
{
	ensure_init();
	size_t len = name ? strlen(name) : 0;
	if (!len || len >= sizeof(allocinfo_allocator::name) || strpbrk(name, " \t\n")) {
		errno = EINVAL;
		return nullptr;
	}
	if (!running()) {
		errno = ENOTSUP;
		return nullptr;
	}
	busy_guard guard;
	registry_lock();
	allocinfo_allocator *a = nullptr;
	for (uint32_t i = 1; i <= g_nr_allocators; i++)
		if (strcmp(g_allocators[i]->name, name) == 0)
			a = g_allocators[i];
	if (!a && g_nr_allocators < MAX_ALLOCATORS) {
		if (!g_pair_slots) {
			g_pair_slots = new plain_map<uint32_t>();
			g_index = new plain_map<charged>();
		}
		a = new allocinfo_allocator();
		a->id = ++g_nr_allocators;
		memcpy(a->name, name, len + 1);
		a->name_off = store_intern(name);
		g_allocators[a->id] = a;
	}
	registry_unlock();
	if (!a)
		errno = ENOSPC;
	return a;
}

int allocinfo::charge_from(struct allocinfo_allocator *a, const void *p, size_t size, uintptr_t ra)
{
	if (!a || !p) {
		errno = EINVAL;
		return -1;
	}
	if (!running() || !__atomic_load_n(g_fast.enabled, __ATOMIC_RELAXED))
		return 0;	/* counting is off: not counted, nor uncounted later */
	uint32_t slot = slot_for_caller(ra);	/* scope, alloc_hooks(), else the caller */
	busy_guard guard;
	registry_lock();
	uint32_t pair = pair_slot(slot, a);
	registry_unlock();
	pthread_mutex_lock(&g_index_lock);
	int fresh = g_index->insert((uintptr_t)p, charged{ size, pair, a->id });
	pthread_mutex_unlock(&g_index_lock);
	if (fresh <= 0) {
		errno = fresh ? ENOMEM : EEXIST;
		return -1;
	}
	counter_add(pair, (int64_t)size, 1);
	return 0;
}

extern "C" EXPORT int allocinfo_charge(struct allocinfo_allocator *a, const void *p, size_t size)
{
	return charge_from(a, p, size, (uintptr_t)__builtin_return_address(0));
}

extern "C" EXPORT int allocinfo_charge_from(struct allocinfo_allocator *a, const void *p,
					    size_t size, const void *caller)
{
	return charge_from(a, p, size, (uintptr_t)caller);
}

extern "C" EXPORT int allocinfo_uncharge(struct allocinfo_allocator *a, const void *p)
{
	if (!a) {
		errno = EINVAL;
		return -1;
	}
	if (!g_index) {
		errno = ENOENT;
		return -1;
	}
	busy_guard guard;
	pthread_mutex_lock(&g_index_lock);
	charged *known = g_index->find((uintptr_t)p);
	charged c = {};
	bool found = known && known->allocator == a->id;
	if (found) {
		c = *known;
		g_index->erase((uintptr_t)p);
	}
	pthread_mutex_unlock(&g_index_lock);
	if (!found) {
		errno = ENOENT;
		return -1;
	}
	counter_sub(c.slot, (int64_t)c.size, 1);
	return 0;
}
