/* SPDX-License-Identifier: MIT */
/*
 * Tag registration (static tags from each object's "allocinfo_tags" section), module
 * records kept in an RCU list, slot allocation, and unload handling: tags of an
 * unloaded object stay (marked unloaded) until their counters return to zero, as the
 * kernel keeps a module's tags while its allocations live.
 */
#include "registry.h"

#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <string.h>
#include <unistd.h>

#include <sched.h>
#include <time.h>

#include "backend.h"
#include "bare_name.h"
#include "caller_tags.h"
#include "nocancel.h"
#include "plain_vector.h"
#include "small_heap.h"
#include "store.h"
#include "wrappers.h"

/* The sections every instrumented object has; allocinfo_register_tags() is exported. */
extern "C" EXPORT void allocinfo_register_tags(struct alloc_tag *start, struct alloc_tag *stop);

namespace allocinfo {

/* A string of the object's and where the store holds it: tags follow one another in
 * their section by translation unit and by function, so the last file and function
 * interned are usually the next tag's too (same pointer: the object's own literal),
 * and a start-up registering thousands of tags need not hash each name again. */
struct interned_memo {
	const char *str = nullptr;
	uint32_t off = 0;
};

struct module {
	module *next;	/* atomic: lookups walk the list without the lock */
	uintptr_t l_addr, lo, hi;
	uint32_t path_off;
	plain_vector<uint32_t> slots;	/* registry lock */
	interned_memo file, func;	/* registry lock */
};

namespace {

pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
/*
 * The module list: lookups walk it with acquire loads and no lock (so finding an
 * address never waits for a writer or a dlopen); writers hold g_lock. An unlinked
 * record keeps its `next`, so a lookup standing on it walks on, and it is freed only
 * once no lookup is under way (g_lookups back to zero): the few lookups there are (a
 * caller tag's first sight) make that wait short. Without liburcu, whose start-up
 * registration costs every process milliseconds of exit time.
 */
module *g_modules;
unsigned g_lookups;	/* atomic: lookups walking the list now */
plain_vector<uint32_t> *g_free_slots;		/* reclaimed slots */
plain_vector<uint32_t> *g_unloaded_slots;	/* tags of unloaded objects, still live */
uint32_t g_next_slot = ALLOCINFO_TAG_FIRST;
uint32_t g_overflow_slot;
char g_exe_path[PATH_MAX];

/*
 * Set while fork() holds the registry lock. Other atfork handlers may
 * allocate in the child before ours releases them (ThreadSanitizer's starts a thread):
 * a slow path that met the window would wait forever, so it charges the overflow tag.
 */
bool g_fork_window;

struct find_ctx {
	uintptr_t addr;
	object_info *out;
	bool found;
};

int find_object_cb(struct dl_phdr_info *info, size_t, void *data)
{
	auto *ctx = static_cast<find_ctx *>(data);
	uintptr_t lo = UINTPTR_MAX, hi = 0;
	bool hit = false;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD)
			continue;
		uintptr_t start = info->dlpi_addr + ph->p_vaddr;
		uintptr_t end = start + ph->p_memsz;
		if (start < lo)
			lo = start;
		if (end > hi)
			hi = end;
		if (ctx->addr >= start && ctx->addr < end)
			hit = true;
	}
	if (!hit)
		return 0;
	ctx->out->l_addr = info->dlpi_addr;
	ctx->out->lo = lo;
	ctx->out->hi = hi;
	const char *name = info->dlpi_name;
	if (!name || !name[0])
		name = g_exe_path;
	/* Copied, cut to fit, without printf: its code is 128 KiB of the C
	 * library that a program may never run, mapped at each new caller's lookup. */
	size_t n = strnlen(name, sizeof(ctx->out->path) - 1);
	memcpy(ctx->out->path, name, n);
	ctx->out->path[n] = '\0';
	ctx->found = true;
	return 1;
}

/* Waits until no lookup walks the module list; false after about a second (then
 * the caller keeps what it meant to free rather than risk a lookup on it). */
bool wait_for_lookups()
{
	__atomic_thread_fence(__ATOMIC_SEQ_CST);	/* unlinked before counted */
	struct timespec tick = { 0, 100 * 1000 };
	for (int i = 0; i < 10000; i++) {
		if (__atomic_load_n(&g_lookups, __ATOMIC_SEQ_CST) == 0)
			return true;
		if (i < 100)
			sched_yield();
		else
			nocancel::nanosleep(&tick, nullptr);
	}
	return false;
}

/* A static tag inside a declared wrapper (wrappers.h) keeps no slot: each allocation
 * through it is charged to the wrapper's caller. The library marks it in its flags,
 * with the wrapper's id above. */
constexpr unsigned TAG_F_IN_WRAPPER = 0x80000000u;
constexpr unsigned TAG_WRAPPER_SHIFT = 16;

/* s interned, through the memo of the last string interned in its place. Registry
 * lock held. */
uint32_t intern_via(interned_memo &memo, const char *s)
{
	if (s != memo.str || !memo.off) {
		memo.off = store_intern(s);
		memo.str = s;
	}
	return memo.off;
}

/* Gives tag t (of module m) a slot and publishes it; 0 for a tag inside a declared
 * wrapper, which it marks. Registry lock held. */
uint32_t assign_slot(alloc_tag *t, module *m)
{
	if (wrappers_declared() && !(t->flags & ALLOC_TAG_F_SCOPE)) {
		/* Wrappers are matched by the bare name (the store keeps the full one). */
		char bare[256];
		const char *fn = t->func ? t->func : "??";
		if (t->flags & ALLOC_TAG_F_CXX) {
			cxx_bare_name(fn, bare, sizeof(bare));
			fn = bare;
		}
		if (uint32_t id = wrapper_named(fn)) {
			__atomic_store_n(&t->flags, (t->flags & 0xffffu) | TAG_F_IN_WRAPPER |
					 id << TAG_WRAPPER_SHIFT, __ATOMIC_RELEASE);
			return ALLOCINFO_TAG_NONE;
		}
	}
	uint32_t slot = slot_alloc();
	if (!slot) {
		slot = g_overflow_slot;
	} else {
		/* A C++ function's name is kept as __PRETTY_FUNCTION__ gives it; readers
		 * tidy it (the library has no C++ runtime of its own to do it with). */
		uint32_t flags = (t->flags & ALLOC_TAG_F_SCOPE) ? ALLOCINFO_TAGF_SCOPE : 0;
		if (t->flags & ALLOC_TAG_F_CXX)
			flags |= ALLOCINFO_TAGF_CXX;
		store_publish_tag(slot, flags, intern_via(m->file, t->file ? t->file : "??"),
				  intern_via(m->func, t->func ? t->func : "??"), m->path_off,
				  t->line, 0);
		m->slots.push_back(slot);
	}
	__atomic_store_n(&t->counter, counter_offset(slot), __ATOMIC_RELEASE);
	__atomic_store_n(&t->index, slot, __ATOMIC_RELEASE);
	return slot;
}

} /* namespace */

bool describe_object(uintptr_t addr, object_info &out)
{
	find_ctx ctx = { addr, &out, false };
	dl_iterate_phdr(find_object_cb, &ctx);
	return ctx.found;
}

void registry_lock() { pthread_mutex_lock(&g_lock); }
void registry_unlock() { pthread_mutex_unlock(&g_lock); }

bool module_lookup_rcu(uintptr_t addr, object_info &oi)
{
	bool found = false;
	__atomic_fetch_add(&g_lookups, 1, __ATOMIC_SEQ_CST);
	for (module *m = __atomic_load_n(&g_modules, __ATOMIC_ACQUIRE); m;
	     m = __atomic_load_n(&m->next, __ATOMIC_ACQUIRE))
		if (addr >= m->lo && addr < m->hi) {
			oi.l_addr = m->l_addr;
			oi.lo = m->lo;
			oi.hi = m->hi;
			found = true;
			break;
		}
	__atomic_fetch_sub(&g_lookups, 1, __ATOMIC_RELEASE);
	return found;
}

module *module_get(const object_info &oi)
{
	module **tail = &g_modules;
	for (module *m = g_modules; m; tail = &m->next, m = m->next)
		if (m->l_addr == oi.l_addr && m->lo == oi.lo)
			return m;
	module *m = new module();
	m->l_addr = oi.l_addr;
	m->lo = oi.lo;
	m->hi = oi.hi;
	m->path_off = store_intern(oi.path[0] ? oi.path : "??");
	m->next = nullptr;
	__atomic_store_n(tail, m, __ATOMIC_RELEASE);	/* complete before it is seen */
	return m;
}

uint32_t module_path_off(const module *m) { return m->path_off; }
void module_add_slot(module *m, uint32_t slot) { m->slots.push_back(slot); }

uint32_t slot_alloc()
{
	if (g_free_slots && !g_free_slots->empty()) {
		uint32_t s = g_free_slots->back();
		g_free_slots->pop_back();
		return s;
	}
	if (g_next_slot >= g_store.hdr->tag_capacity)
		return 0;
	return g_next_slot++;
}

uint32_t overflow_slot() { return g_overflow_slot; }

bool in_fork_window()
{
	return __atomic_load_n(&g_fork_window, __ATOMIC_ACQUIRE);
}

void registry_init()
{
	ssize_t n = readlink("/proc/self/exe", g_exe_path, sizeof(g_exe_path) - 1);
	g_exe_path[n > 0 ? n : 0] = '\0';
	busy_guard guard;
	wrappers_init();
	g_free_slots = new plain_vector<uint32_t>();
	g_unloaded_slots = new plain_vector<uint32_t>();
	/* The overflow tag stands for call sites beyond the store's capacity. */
	g_store.hdr->exe_off = store_intern(g_exe_path);
	/* Readers find blocks in it (allocinfo --addr). */
	g_store.hdr->small_base = g_fast.small_base != small::NO_BASE ? g_fast.small_base : 0;
	g_store.hdr->small_len_at = (uint64_t)(uintptr_t)&g_fast.small_len;
	/* glibc's chunk headers, which readers check, only over glibc's allocator. */
	g_store.hdr->block_layout =
		!RECORD_ALWAYS && backend::g_underneath == backend::underneath::glibc
			? ALLOCINFO_BLOCKS_GLIBC : 0;
	g_overflow_slot = g_next_slot++;
	store_publish_tag(g_overflow_slot, ALLOCINFO_TAGF_OVERFLOW, store_intern("??"),
			  store_intern("other_call_sites"), store_intern(g_exe_path), 0, 0);
}

/* An allocation at a tag inside a declared wrapper. */
[[gnu::noinline]] static uint32_t wrapped_tag_slot(const alloc_tag *t)
{
	if (in_fork_window())
		return g_overflow_slot;
	uint32_t flags = __atomic_load_n(&t->flags, __ATOMIC_ACQUIRE);
	return wrapped_tag_slot(t, (flags >> TAG_WRAPPER_SHIFT) & WRAPPER_MAX_IDS);
}

/* Tag t's first allocation: its slot, 0 when it lies inside a declared wrapper. */
static uint32_t register_new_tag(alloc_tag *t)
{
	busy_guard guard;
	object_info_block oi;
	if (!oi)
		return g_overflow_slot;	/* registered on a later call */
	if (!describe_object((uintptr_t)t, *oi))
		strcpy(oi->path, "??");
	registry_lock();
	uint32_t slot = __atomic_load_n(&t->index, __ATOMIC_ACQUIRE);
	if (!slot && !(t->flags & TAG_F_IN_WRAPPER))
		slot = assign_slot(t, module_get(*oi));
	registry_unlock();
	return slot;
}

uint32_t register_tag(const alloc_tag *ct)
{
	if (__atomic_load_n(&ct->flags, __ATOMIC_RELAXED) & TAG_F_IN_WRAPPER)
		return wrapped_tag_slot(ct);
	if (in_fork_window())
		return g_overflow_slot;	/* registered on a later call */
	uint32_t slot = register_new_tag(const_cast<alloc_tag *>(ct));
	return slot ? slot : wrapped_tag_slot(ct);
}

void scan_unloaded()
{
	if (__atomic_load_n(&g_fast.state, __ATOMIC_ACQUIRE) != STATE_RUNNING)
		return;
	busy_guard guard;
	/* Which objects are still there, read without the registry lock. */
	struct live_set {
		struct object {
			uintptr_t l_addr, lo;
		};
		plain_vector<object> objs;
		bool incomplete = false;	/* out of memory: judge nothing */
		static int cb(struct dl_phdr_info *info, size_t, void *data)
		{
			uintptr_t lo = UINTPTR_MAX;
			for (int i = 0; i < info->dlpi_phnum; i++)
				if (info->dlpi_phdr[i].p_type == PT_LOAD &&
				    info->dlpi_addr + info->dlpi_phdr[i].p_vaddr < lo)
					lo = info->dlpi_addr + info->dlpi_phdr[i].p_vaddr;
			auto *self = static_cast<live_set *>(data);
			if (!self->objs.push_back({ info->dlpi_addr, lo }))
				self->incomplete = true;
			return 0;
		}
	} live;
	dl_iterate_phdr(live_set::cb, &live);
	if (live.incomplete)
		return;

	plain_vector<module *> gone;
	registry_lock();
	for (module **pp = &g_modules, *m; (m = *pp);) {
		bool present = false;
		for (auto &o : live.objs)
			if (o.l_addr == m->l_addr && o.lo == m->lo) {
				present = true;
				break;
			}
		if (present) {
			pp = &m->next;
			continue;
		}
		for (uint32_t slot : m->slots) {
			store_set_tag_flags(slot, ALLOCINFO_TAGF_UNLOADED, 0);
			g_unloaded_slots->push_back(slot);
		}
		caller_tags_forget(m->lo, m->hi);
		wrappers_forget(m->lo, m->hi);
		/* Unlinked, its own `next` kept for a lookup standing on it. */
		__atomic_store_n(pp, m->next, __ATOMIC_RELEASE);
		(void)gone.push_back(m);	/* without memory to note it, it stays allocated */
	}
	registry_unlock();
	/* Freed by the unloading thread once no lookup is under way, outside the lock:
	 * no worker thread (as call_rcu would start), nothing to do at fork. */
	if (!gone.empty() && wait_for_lookups())
		for (module *g : gone)
			delete g;
	reclaim_unloaded();
}

void reclaim_unloaded()
{
	if (__atomic_load_n(&g_fast.state, __ATOMIC_ACQUIRE) != STATE_RUNNING)
		return;
	busy_guard guard;
	registry_lock();
	auto &v = *g_unloaded_slots;
	for (size_t i = 0; i < v.size();) {
		int64_t bytes, calls;
		store_sum(v[i], &bytes, &calls);
		if (bytes == 0 && calls == 0) {
			store_clear_tag(v[i]);
			g_free_slots->push_back(v[i]);
			v[i] = v.back();
			v.pop_back();
		} else {
			i++;
		}
	}
	registry_unlock();
}

/* No handler allocates: an allocation in the child before the registry lock is
 * released would wait for it forever. */
void registry_fork_prepare()
{
	registry_lock();
	__atomic_store_n(&g_fork_window, true, __ATOMIC_RELEASE);
}

void registry_fork_parent()
{
	__atomic_store_n(&g_fork_window, false, __ATOMIC_RELEASE);
	registry_unlock();
}

void registry_fork_child()
{
	/* Lookups of threads that do not exist in the child are not under way. */
	__atomic_store_n(&g_lookups, 0, __ATOMIC_RELAXED);
	registry_unlock();
	__atomic_store_n(&g_fork_window, false, __ATOMIC_RELEASE);
}

} /* namespace allocinfo */

using namespace allocinfo;

extern "C" void allocinfo_register_tags(struct alloc_tag *start, struct alloc_tag *stop)
{
	note_constructors_running();
	ensure_init();
	if (__atomic_load_n(&g_fast.state, __ATOMIC_ACQUIRE) != STATE_RUNNING || !start ||
	    stop <= start)
		return;
	busy_guard guard;
	object_info_block oi;	/* a constructor's: a dlopen on a small thread runs it */
	if (!oi)
		return;	/* each tag registered at its first allocation */
	if (!describe_object((uintptr_t)start, *oi))
		strcpy(oi->path, "??");
	registry_lock();
	module *m = module_get(*oi);
	for (alloc_tag *t = start; t < stop; t++)
		if (!__atomic_load_n(&t->index, __ATOMIC_ACQUIRE) && !(t->flags & TAG_F_IN_WRAPPER))
			assign_slot(t, m);
	registry_unlock();
}
