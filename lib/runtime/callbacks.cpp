/* SPDX-License-Identifier: MIT */
/*
 * User callbacks: registration (an immutable chain replaced under a mutex and read
 * under RCU), the calls they surround, and ALLOCINFO_CALLBACKS.
 *
 * A call reads the chain once and runs every pre callback, the operation and every
 * post callback of that one snapshot, inside one RCU read-side section: removal
 * publishes a chain without the pair and waits for a grace period, after which no
 * thread can still be inside it.
 */
#include "callbacks.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <sys/auxv.h>

#include "alloc.h"
#include "library_dlopen.h"
#include "options.h"
#include "rcu_published.h"
#include "sampler.h"
#include "store.h"

namespace allocinfo {
namespace callbacks {

uint32_t g_armed;
__thread bool t_inside __attribute__((tls_model("initial-exec")));

namespace {

struct entry {
	allocinfo_callbacks cb;
	int handle;
};

/* One registration list; replaced whole, never changed in place. */
struct chain {
	size_t n;
	entry *e;	/* n entries, in registration order, just after the header */
};

rcu_published<chain> g_chain;	/* null when empty */
pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;	/* serialises add and remove */
int g_next_handle;		/* g_lock */

bool wants(const entry &en, int op)
{
	return en.cb.ops == 0 || (en.cb.ops >> op & 1u);
}

/* The chain of the running call, with the guard set: the callbacks' own allocations
 * (and the operation's, which the library makes itself) call none. */
class section : public rcu_section<chain> {
public:
	section() noexcept : rcu_section<chain>(g_chain) {}
};

size_t moved_by(const void *p)
{
	return p && is_moved(p) ? (size_t)record_of(const_cast<void *>(p))->size : 0;
}

/* Pre callbacks in registration order. Before each, e.moved says how far e.ptr lies
 * inside its block (free, realloc, usable_size, delete). */
void run_pre(const chain *c, allocinfo_event &e, bool track_moved)
{
	if (!c)
		return;
	const void *seen = e.ptr;
	if (track_moved)
		e.moved = moved_by(e.ptr);
	for (size_t i = 0; i < c->n; i++) {
		const entry &en = c->e[i];
		if (!en.cb.pre || !wants(en, e.op))
			continue;
		if (track_moved && e.ptr != seen) {
			seen = e.ptr;
			e.moved = moved_by(e.ptr);
		}
		en.cb.pre(en.cb.user_data, &e);
	}
	if (track_moved && e.ptr != seen)
		e.moved = moved_by(e.ptr);
}

/* The mark below a pointer a post callback moved into block p. A pointer less than
 * 16 bytes in cannot be marked: callbacks.md asks for whole multiples of 16. */
void mark_moved(void *q, void *p)
{
	size_t d = (size_t)(static_cast<char *>(q) - static_cast<char *>(p));
	if (static_cast<char *>(q) < static_cast<char *>(p) + sizeof(alloc_record))
		return;
	alloc_record mark = { d, 0, RECORD_MAGIC | RECORD_F_MOVED };
	memcpy(static_cast<char *>(q) - sizeof(alloc_record), &mark, sizeof(mark));
	page_starts::note(q);
}

/* Post callbacks in reverse order. block: the block just made, below which a moved
 * pointer is marked (null for free and usable_size). */
void run_post(const chain *c, allocinfo_event &e, void *block)
{
	if (!c)
		return;
	for (size_t i = c->n; i-- > 0;) {
		const entry &en = c->e[i];
		if (!en.cb.post || !wants(en, e.op))
			continue;
		void *before = e.ptr;
		en.cb.post(en.cb.user_data, &e);
		if (block && e.ptr != before && e.ptr) {
			/* moved again: the pointer before is never handed out */
			if (before != block && page_starts::guarded_start(before))
				page_starts::take(before);
			mark_moved(e.ptr, block);
		}
	}
}

/* The names of the tag in `slot`, from the store (caller tags have no file or
 * function until a reader names them). */
void name_slot(allocinfo_event &e, uint32_t slot)
{
	if (slot < ALLOCINFO_TAG_FIRST || !g_store.hdr || slot >= g_store.hdr->tag_capacity)
		return;
	const allocinfo_store_tag &t = g_store.tags[slot];
	e.file = t.file_off ? g_store.strings + t.file_off : nullptr;
	e.func = t.func_off ? g_store.strings + t.func_off : nullptr;
	if (t.module_off) {
		/* The basename of the module's path; the last one found is kept, as
		 * consecutive calls mostly come from one module. */
		static __thread uint32_t last_off __attribute__((tls_model("initial-exec")));
		static __thread const char *last_base __attribute__((tls_model("initial-exec")));
		if (t.module_off != last_off) {
			const char *m = g_store.strings + t.module_off;
			const char *slash = strrchr(m, '/');
			last_base = slash ? slash + 1 : m;
			last_off = t.module_off;
		}
		e.module = last_base;
	}
	e.line = t.line;
}

bool running()
{
	return __atomic_load_n(&g_fast.state, __ATOMIC_ACQUIRE) == STATE_RUNNING;
}

/* The tag an allocation from site s is charged to. */
uint32_t slot_of_site(site s)
{
	return s.tag ? slot_for_site(s.tag) : slot_for_caller(s.ra);
}

/* An allocation's call site: the tag it is charged to. */
void fill_site(allocinfo_event &e, site s)
{
	e.caller = s.tag ? nullptr : reinterpret_cast<const void *>(s.ra);
	if (running()) {
		name_slot(e, slot_of_site(s));
	} else if (s.tag) {
		e.file = s.tag->file;
		e.func = s.tag->func;
		e.line = s.tag->line;
	}
}

/* The block under a pointer a post callback may have moved. */
void *block_of(void *p)
{
	return static_cast<char *>(p) - moved_by(p);
}

/* A block's call site and size (free, usable_size, delete): its allocation's tag. */
void fill_block(allocinfo_event &e, void *p)
{
	void *b = block_of(p);
	uintptr_t base = g_fast.small_base;
	if (small::contains(b, base)) {
		unsigned c = small::class_at(b, base);
		small::trailer *t = small::trailer_of(b, c);
		if (small::live_slot(b, base, c, t)) {
			e.size = t->size;
			name_slot(e, (t->counter & g_fast.counter_mask) >> 4);
		}
		return;
	}
	if (!has_record(b))
		return;	/* made while counting was off */
	alloc_record *rec = record_of(b);
	e.size = rec->size;
	if (!(rec->meta & RECORD_F_UNCOUNTED))
		name_slot(e, record_slot(rec));
}

/* The allocation itself, with a record marked RECORD_F_CALLBACKS (even when not
 * counted: its free must find the callbacks). */
void *make(site s, size_t n, size_t align, size_t reserve, bool zero)
{
	slow_plan plan = slow_mode();
	if (plan.mode == how::never) {
		if (align || reserve > n)
			return backend::memalign_plain(align, reserve > n ? reserve : n);
		return zero ? backend::calloc_plain(1, n) : backend::malloc_plain(n);
	}
	uint32_t slot = ALLOCINFO_TAG_DISCARD;
	uint32_t flags = plan.flags | RECORD_F_CALLBACKS;
	if (plan.mode == how::counted)
		slot = slot_of_site(s);
	else
		flags |= RECORD_F_UNCOUNTED;
	if (plan.mode == how::counted && sampler::started() &&
	    sampler::take(reserve > n ? reserve : n))
		return sampler::allocate_sampled(s, slot, n, align, reserve, zero, flags);
	if (!align && reserve <= n)
		return allocate_flagged(slot, n, zero, flags);
	void *p = allocate_aligned(slot, align, n, reserve, flags);
	if (p && zero)
		memset(p, 0, n);
	return p;
}

/* Bytes usable from p, wherever it points in its block. */
size_t usable_from(void *p)
{
	size_t m = moved_by(p);
	void *b = static_cast<char *>(p) - m;
	bool ours = small::contains(b, g_fast.small_base) || has_record(b);
	size_t n = ours ? allocinfo::usable_size(b) : backend::usable_size_plain(b);
	return n > m ? n - m : 0;
}

void free_any(void *p)
{
	if (RECORD_ALWAYS) {
		uint32_t s = __atomic_load_n(&g_fast.state, __ATOMIC_ACQUIRE);
		if (s == STATE_NEVER || s == STATE_UNINIT) {
			backend::free(p);
			return;
		}
	}
	allocinfo::release(p);
}

void *resize(site s, void *p, size_t n)
{
	if (p && is_moved(p)) {	/* into a block of its own, unmoved */
		if (n == 0) {
			free_any(p);
			return nullptr;
		}
		void *q = make(s, n, 0, 0, false);
		if (q) {
			size_t old = usable_from(p);
			memcpy(q, p, old < n ? old : n);
			free_any(p);
		}
		return q;
	}
	slow_plan plan = slow_mode();
	if (plan.mode == how::never)
		return backend::realloc_plain(p, n);
	if (!p)
		return make(s, n, 0, 0, false);
	if (n == 0) {
		allocinfo::release(p);
		return nullptr;
	}
	uint32_t flags = plan.flags | RECORD_F_CALLBACKS;
	if (plan.mode == how::counted && sampler::started() && !sampler::fits_in_place(p, n, flags) &&
	    sampler::take(n)) {
		void *q = sampler::allocate_sampled(s, slot_of_site(s), n, 0, 0, false, flags);
		if (q) {
			size_t old = usable_from(p);
			memcpy(q, p, old < n ? old : n);
			allocinfo::release(p);
		}
		return q;
	}
	if (plan.mode == how::counted)
		return allocinfo::reallocate(slot_of_site(s), p, n, flags);
	return allocinfo::reallocate(ALLOCINFO_TAG_DISCARD, p, n, flags | RECORD_F_UNCOUNTED);
}

} /* namespace */

bool is_moved(const void *p)
{
	if (small::contains(p, g_fast.small_base) || !below_readable(p))
		return false;
	uint32_t meta = static_cast<const uint32_t *>(p)[-1];
	return (meta & (RECORD_MAGIC_MASK | RECORD_F_MOVED)) == (RECORD_MAGIC | RECORD_F_MOVED);
}

/* The chain around an allocation; apart, so that allocate() below is a test and a
 * tail call when only the profiler is armed. */
[[gnu::noinline]] static void *allocate_with_chain(int op, site s, size_t size, size_t align,
						   size_t reserve, bool zero)
{
	section sec;
	allocinfo_event e = {};
	e.op = op;
	e.size = size;
	e.alignment = align;
	fill_site(e, s);
	run_pre(sec.get(), e, false);
	void *p = make(s, e.size, e.alignment, reserve, zero);
	int err = errno;
	e.ptr = p;
	run_post(sec.get(), e, p);
	errno = err;
	return e.ptr;
}

void *allocate(int op, site s, size_t size, size_t align, size_t reserve, bool zero)
{
	if (!(__atomic_load_n(&g_armed, __ATOMIC_ACQUIRE) & ARMED_CALLBACKS))
		return sampler::allocate(op, s, size, align, reserve, zero);
	return allocate_with_chain(op, s, size, align, reserve, zero);
}

void *reallocate(site s, void *p, size_t size)
{
	if (!(__atomic_load_n(&g_armed, __ATOMIC_ACQUIRE) & ARMED_CALLBACKS) &&
	    !(p && is_moved(p)))
		return sampler::reallocate(s, p, size);
	section sec;
	allocinfo_event e = {};
	e.op = ALLOCINFO_OP_REALLOC;
	e.size = size;
	e.ptr = p;
	fill_site(e, s);
	run_pre(sec.get(), e, true);
	void *q = resize(s, e.ptr, e.size);
	int err = errno;
	e.ptr = q;
	e.moved = 0;
	run_post(sec.get(), e, q);
	errno = err;
	return e.ptr;
}

void release(void *p, int op) noexcept
{
	if (!chain_wanted()) {	/* a moved pointer, its callbacks gone or not to be called */
		free_any(block_of(p));
		return;
	}
	section sec;
	allocinfo_event e = {};
	e.op = op;
	e.ptr = p;
	fill_block(e, p);
	run_pre(sec.get(), e, true);
	if (e.ptr)
		free_any(block_of(e.ptr));
	e.moved = 0;
	run_post(sec.get(), e, nullptr);
}

size_t usable_size(void *p)
{
	if (!(__atomic_load_n(&g_armed, __ATOMIC_ACQUIRE) & ARMED_CALLBACKS))
		return usable_from(p);
	section sec;
	allocinfo_event e = {};
	e.op = ALLOCINFO_OP_USABLE_SIZE;
	e.ptr = p;
	fill_block(e, p);
	run_pre(sec.get(), e, true);
	e.size = e.ptr ? usable_from(e.ptr) : 0;
	e.moved = 0;
	run_post(sec.get(), e, nullptr);
	return e.size;
}

size_t moved_usable_size(void *p)
{
	return usable_from(p);
}

void load_from_environment()
{
	const char *path = find_env("ALLOCINFO_CALLBACKS");
	if (!path || !*path || getauxval(AT_SECURE))
		return;
	if (__atomic_load_n(&g_fast.state, __ATOMIC_ACQUIRE) != STATE_RUNNING) {
		log_message("ALLOCINFO_CALLBACKS='%.200s' is ignored: profiling was started "
			    "with ALLOCINFO=never", path);
		return;
	}
	void *h;
	int (*init)(void) = nullptr;
	{
		busy_guard guard;	/* the loader's allocations are the library's */
		h = library_dlopen(path, RTLD_NOW | RTLD_LOCAL);
		if (!h) {
			const char *why = library_dlerror();
			log_message("ALLOCINFO_CALLBACKS='%.200s': cannot load it (%.200s); "
				    "no callbacks", path, why ? why : "?");
			return;
		}
		init = reinterpret_cast<int (*)(void)>(dlsym(h, "allocinfo_callbacks_init"));
		if (!init) {
			log_message("ALLOCINFO_CALLBACKS='%.200s': it has no "
				    "allocinfo_callbacks_init(); no callbacks", path);
			dlclose(h);
			return;
		}
	}
	int r = init();
	if (r < 0)
		log_message("ALLOCINFO_CALLBACKS='%.200s': allocinfo_callbacks_init() "
			    "returned %d", path, r);
}

namespace {

/* Publishes c (may be null) and waits until no call can still use the old chain;
 * returns it, to be freed. g_lock held. */
chain *publish(chain *c)
{
	chain *old;
	if (c) {
		__atomic_fetch_or(&g_armed, ARMED_CALLBACKS, __ATOMIC_ACQ_REL);
		old = g_chain.publish(c);
	} else {
		old = g_chain.publish(c);
		__atomic_fetch_and(&g_armed, ~ARMED_CALLBACKS, __ATOMIC_ACQ_REL);
	}
	update_fast_paths();
	g_chain.wait_for_readers();
	return old;
}

chain *new_chain(size_t n)
{
	busy_guard guard;
	void *m = malloc(sizeof(chain) + n * sizeof(entry));
	if (!m)
		return nullptr;
	chain *c = static_cast<chain *>(m);
	c->n = n;
	c->e = reinterpret_cast<entry *>(c + 1);
	return c;
}

void free_chain(chain *c)
{
	busy_guard guard;
	free(c);
}

} /* namespace */

} /* namespace callbacks */
} /* namespace allocinfo */

using namespace allocinfo;
using namespace allocinfo::callbacks;

extern "C" EXPORT int allocinfo_callbacks_add(const struct allocinfo_callbacks *cb)
{
	if (!cb || cb->size < offsetof(allocinfo_callbacks, user_data) + sizeof(void *) ||
	    (!cb->pre && !cb->post) || (cb->ops & ~ALLOCINFO_OPS_ALL))
		return -EINVAL;
	if (t_inside)
		return -EDEADLK;	/* inside an RCU read-side section */
	ensure_init();
	if (__atomic_load_n(&g_fast.state, __ATOMIC_ACQUIRE) != STATE_RUNNING)
		return -ENOTSUP;	/* ALLOCINFO=never */
	if (!rcu::load())
		return -ELIBACC;	/* no liburcu-bp to publish the chain with */
	pthread_mutex_lock(&g_lock);
	size_t n = g_chain.ptr ? g_chain.ptr->n : 0;
	chain *c = new_chain(n + 1);
	if (!c) {
		pthread_mutex_unlock(&g_lock);
		return -ENOMEM;
	}
	if (n)
		memcpy(c->e, g_chain.ptr->e, n * sizeof(entry));
	entry &en = c->e[n];
	memset(&en, 0, sizeof(en));
	memcpy(&en.cb, cb, cb->size < sizeof(en.cb) ? cb->size : sizeof(en.cb));
	en.cb.size = sizeof(en.cb);
	int handle = g_next_handle++;
	en.handle = handle;
	chain *old = publish(c);
	pthread_mutex_unlock(&g_lock);
	free_chain(old);
	return handle;
}

extern "C" EXPORT int allocinfo_callbacks_remove(int handle)
{
	if (t_inside)
		return -EDEADLK;
	pthread_mutex_lock(&g_lock);
	size_t n = g_chain.ptr ? g_chain.ptr->n : 0, at = n;
	for (size_t i = 0; i < n; i++)
		if (g_chain.ptr->e[i].handle == handle)
			at = i;
	if (at == n) {
		pthread_mutex_unlock(&g_lock);
		return -ENOENT;
	}
	chain *c = nullptr;
	if (n > 1) {
		c = new_chain(n - 1);
		if (!c) {
			pthread_mutex_unlock(&g_lock);
			return -ENOMEM;
		}
		memcpy(c->e, g_chain.ptr->e, at * sizeof(entry));
		memcpy(c->e + at, g_chain.ptr->e + at + 1, (n - at - 1) * sizeof(entry));
	}
	chain *old = publish(c);
	pthread_mutex_unlock(&g_lock);
	free_chain(old);
	return 0;
}
