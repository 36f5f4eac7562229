/* SPDX-License-Identifier: MIT */
/* The small-block heap's slower half: reserving, refilling, flushing (small_heap.h). */
#include "small_heap.h"

#include <pthread.h>
#include <sys/mman.h>

#include "thread_shard.h"

namespace allocinfo {
namespace small {

__thread thread_cache t_cache __attribute__((tls_model("initial-exec")));

namespace {

constexpr uint8_t batch_for(unsigned c)
{
	size_t n = 4096 / stride(c);
	return (uint8_t)(n < 2 ? 2 : n > 32 ? 32 : n);
}

/*
 * One class's free slots, as a stack of batches, and the part of its address space
 * not yet handed out. A batch is a free list as a cache holds it (linked through each
 * slot's first word, ending in null); its first slot's second word links to the next
 * batch and its third word says how many slots it has. So a refill takes a whole
 * batch without walking it: the walk would touch every slot, cold, under the lock.
 */
struct alignas(64) central {
	pthread_mutex_t lock;
	void **batches;
	char *fresh;		/* slots never used: [fresh, end) */
	char *end;
};

central g_central[CLASSES];

/* Links n fresh slots of class c into a free list from *first; false if the class's
 * address space has less room. */
bool carve(central &k, unsigned c, unsigned n, void **first)
{
	size_t st = stride(c);
	if ((size_t)(k.end - k.fresh) < st * n)
		return false;
	char *p = k.fresh;
	__atomic_store_n(&k.fresh, p + st * n, __ATOMIC_RELEASE);	/* the one store */
	*first = p;
	for (unsigned i = 0; i < n; i++, p += st) {
		trailer_of(p, c)->size = FREED;
		*reinterpret_cast<void **>(p) = i + 1 < n ? p + st : nullptr;
	}
	return true;
}

/* Pushes the free list [first ... ] of n slots, null-terminated, as one batch. */
void give(unsigned c, void *first, unsigned n)
{
	central &k = g_central[c];
	void **b = static_cast<void **>(first);
	b[2] = reinterpret_cast<void *>((uintptr_t)n);
	pthread_mutex_lock(&k.lock);
	b[1] = k.batches;
	__atomic_store_n(&k.batches, b, __ATOMIC_RELEASE);	/* the one store */
	pthread_mutex_unlock(&k.lock);
}

} /* namespace */

#define B4(f, c) f(c), f(c + 1), f(c + 2), f(c + 3)
#define B16(f, c) B4(f, c), B4(f, c + 4), B4(f, c + 8), B4(f, c + 12)
#define B64(f) B16(f, 0), B16(f, 16), B16(f, 32), B16(f, 48)

const uint8_t g_batch[CLASSES] = { B64(batch_for) };

constexpr uint16_t cache_max(unsigned c)
{
	return (uint16_t)(2 * batch_for(c));
}
const uint16_t g_cache_max[CLASSES] = { B64(cache_max) };

constexpr uint64_t stride_inverse(unsigned c)
{
	return UINT64_MAX / stride(c) + 1;
}
const uint64_t g_stride_inverse[CLASSES] = { B64(stride_inverse) };

#undef B64
#undef B16
#undef B4

bool init()
{
	void *base = mmap(nullptr, REGION, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (base == MAP_FAILED)
		return false;
	for (unsigned c = 0; c < CLASSES; c++) {
		central &k = g_central[c];
		pthread_mutex_init(&k.lock, nullptr);
		k.batches = nullptr;
		k.fresh = static_cast<char *>(base) + ((size_t)c << CLASS_SHIFT);
		k.end = k.fresh + ((size_t)1 << CLASS_SHIFT);
	}
	__atomic_store_n(&g_fast.small_base, (uintptr_t)base, __ATOMIC_RELEASE);
	return true;
}

void *refill(unsigned c)
{
	/* Only a thread whose exit hook will empty its cache may keep one; and a cache
	 * only fills when the heap exists. */
	if (!thread_shard() || g_fast.small_base == NO_BASE)
		return nullptr;
	central &k = g_central[c];
	void *first = nullptr;
	unsigned n = 0;
	pthread_mutex_lock(&k.lock);
	if (void **b = k.batches) {
		__atomic_store_n(&k.batches, static_cast<void **>(b[1]), __ATOMIC_RELEASE);
		first = b;
		n = (unsigned)(uintptr_t)b[2];
	} else if (carve(k, c, g_batch[c], &first)) {
		n = g_batch[c];
	}
	pthread_mutex_unlock(&k.lock);
	if (!n)
		return nullptr;
	/* One for the caller, the rest for the cache, which is empty (or this would not
	 * run). */
	t_cache.head[c] = *static_cast<void **>(first);
	t_cache.count[c] = (uint16_t)(n - 1);
	return first;
}

void flush(unsigned c)
{
	unsigned n = g_batch[c];
	void *first = t_cache.head[c], *last = first;
	for (unsigned i = 1; i < n; i++)
		last = *static_cast<void **>(last);
	t_cache.head[c] = *static_cast<void **>(last);
	t_cache.count[c] = (uint16_t)(t_cache.count[c] - n);
	*static_cast<void **>(last) = nullptr;
	give(c, first, n);
}

void release_to_central(void *p, unsigned c)
{
	*static_cast<void **>(p) = nullptr;
	give(c, p, 1);
}

void thread_exit()
{
	for (unsigned c = 0; c < CLASSES; c++) {
		void *first = t_cache.head[c];
		if (!first)
			continue;
		unsigned n = t_cache.count[c];
		t_cache.head[c] = nullptr;
		t_cache.count[c] = 0;
		give(c, first, n);
	}
}

void fork_child()
{
	for (central &k : g_central)
		pthread_mutex_init(&k.lock, nullptr);
}

void report_bad_slot(void *p, const char *what)
{
	uintptr_t base = g_fast.small_base;
	unsigned c = class_at(p, base);
	const char *problem = !slot_start(p, base, c) ? "not the start of a block"
			      : trailer_of(p, c)->size == FREED
				      ? "already freed"
				      : "the 8 bytes after the block were overwritten";
	log_message("%s(%p): %s; leaving it alone", what, p, problem);
}

} /* namespace small */
} /* namespace allocinfo */
