/* SPDX-License-Identifier: MIT */
/* The pointers handed out over another allocator that start a page (page_starts.h). */
#include "page_starts.h"

#include <errno.h>
#include <sys/mman.h>

#include "futex_lock.h"
#include "read_self.h"

namespace allocinfo {
namespace page_starts {

bool g_guarded;

/*
 * Each thread remembers the last page start it found absent, with the number of
 * pointers noted until then (internal.h's known_absent()): while no pointer was noted
 * since, it is still absent (only noted() adds), and asking again takes neither the
 * lock nor a probe. A loop that gets the same block of the allocator's own every time
 * (its free list's head), one that starts a page, asked the set twice a round (its
 * size, then its free) under the lock.
 */
uint64_t g_noted;	/* pointers noted, ever (and the set's running out); under the lock */
__thread uintptr_t t_absent;
__thread uint64_t t_absent_noted;

namespace {

/*
 * Open addressing, linear probing. A key is a page-aligned address: 0 marks an empty
 * entry, 1 one whose pointer was taken (probing goes on past it). The table is rebuilt
 * when live and taken entries fill half of it. Until the first pointer, the small
 * table in .bss serves (untouched, it costs no memory); if no larger one can be
 * mapped, the current one keeps serving until it is full.
 */
constexpr uintptr_t EMPTY = 0, TAKEN = 1;
constexpr size_t FIRST = 512;

uintptr_t g_first[FIRST];
uintptr_t *g_keys = g_first;
size_t g_capacity = FIRST;	/* a power of two */
size_t g_live, g_used;		/* live keys; live and taken entries */
futex_lock g_lock;
bool g_incomplete;	/* a pointer could not be noted: read below all of them again */

/* Lock held: key was looked for and is not there. */
void note_absent(uintptr_t key)
{
	if (!g_incomplete) {
		t_absent = key;
		t_absent_noted = g_noted;
	}
}

size_t home(uintptr_t key, size_t capacity)
{
	return (size_t)(((key >> 12) * 0x9e3779b97f4a7c15ull) >> 20) & (capacity - 1);
}

/* The entry holding key, or null. */
uintptr_t *find(uintptr_t key)
{
	for (size_t i = home(key, g_capacity), n = 0; n < g_capacity;
	     i = (i + 1) & (g_capacity - 1), n++) {
		if (g_keys[i] == key)
			return &g_keys[i];
		if (g_keys[i] == EMPTY)
			return nullptr;
	}
	return nullptr;
}

/* Into a fresh table of the given capacity: no taken entries left. */
bool rebuild(size_t capacity)
{
	void *m = mmap(nullptr, capacity * sizeof(uintptr_t), PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		return false;
	auto *keys = static_cast<uintptr_t *>(m);
	for (size_t i = 0; i < g_capacity; i++) {
		uintptr_t key = g_keys[i];
		if (key == EMPTY || key == TAKEN)
			continue;
		size_t j = home(key, capacity);
		while (keys[j] != EMPTY)
			j = (j + 1) & (capacity - 1);
		keys[j] = key;
	}
	uintptr_t *old = g_keys;
	size_t old_capacity = g_capacity;
	g_keys = keys;
	g_capacity = capacity;
	g_used = g_live;
	if (old != g_first)
		munmap(old, old_capacity * sizeof(uintptr_t));
	return true;
}

} /* namespace */

/*
 * Once a pointer could not be noted, a page start the set does not hold may be one of
 * the library's or the allocator's own. Ours have their record mapped below; below
 * the allocator's there may be nothing. So the kernel is asked whether the 16 bytes
 * below can be read. A refusal for another reason than EFAULT (a sandbox that forbids
 * the call) says nothing: then they are read, as a block of ours must be.
 */
bool readable_below(const void *p)
{
	char below[16];
	return read_self(static_cast<const char *>(p) - sizeof(below), below, sizeof(below)) !=
	       EFAULT;
}

void *noted(void *p)
{
	if (!g_guarded)
		return p;
	uintptr_t key = (uintptr_t)p;
	bool lost = false;
	g_lock.lock();
	if ((g_used + 1) * 2 > g_capacity) {
		size_t capacity = g_capacity;
		while ((g_live + 1) * 4 > capacity)
			capacity *= 2;
		rebuild(capacity);
	}
	if (find(key)) {
		/* already there (a callback's pointer marked again) */
	} else if (g_used < g_capacity) {
		size_t i = home(key, g_capacity);
		while (g_keys[i] != EMPTY && g_keys[i] != TAKEN)
			i = (i + 1) & (g_capacity - 1);
		if (g_keys[i] == EMPTY)
			g_used++;
		g_keys[i] = key;
		g_live++;
		__atomic_store_n(&g_noted, g_noted + 1, __ATOMIC_RELEASE);
	} else if (!g_incomplete) {
		g_incomplete = lost = true;
		/* a pointer absent now may be one of ours: no thread's answer holds */
		__atomic_store_n(&g_noted, g_noted + 1, __ATOMIC_RELEASE);
	}
	g_lock.unlock();
	if (lost)	/* after the lock: the message may allocate */
		log_message("no memory to note a block that starts a page (%p): whether the bytes "
			    "below such a pointer can be read is asked of the kernel from now on",
			    p);
	return p;
}

bool contains(const void *p)
{
	uintptr_t key = (uintptr_t)p;
	if (known_absent(p))
		return false;
	g_lock.lock();
	bool found = find(key) != nullptr, incomplete = g_incomplete;
	if (!found)
		note_absent(key);
	g_lock.unlock();
	return found || (incomplete && readable_below(p));
}

bool take(const void *p)
{
	uintptr_t key = (uintptr_t)p;
	if (known_absent(p))
		return false;
	g_lock.lock();
	uintptr_t *e = find(key);
	if (e) {
		*e = TAKEN;
		g_live--;
	} else {
		note_absent(key);
	}
	bool incomplete = g_incomplete;
	g_lock.unlock();
	return e != nullptr || (incomplete && readable_below(p));
}

/* Held across fork: the child gets the table as no writer left it half done. */
void fork_prepare() { g_lock.lock(); }
void fork_parent() { g_lock.unlock(); }
void fork_child() { g_lock.reset(); }

} /* namespace page_starts */
} /* namespace allocinfo */
