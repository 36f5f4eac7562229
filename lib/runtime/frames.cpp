/* SPDX-License-Identifier: MIT */
/* Stack walks out of declared wrappers: a cache of frame sizes per return address,
 * filled by the unwinder. */
#include "frames.h"

#include <pthread.h>
#include <sys/mman.h>
#include <unwind.h>

#include "registry.h"
#include "wrappers.h"

namespace allocinfo {

namespace {

constexpr int MAX_FRAMES = 64;
constexpr uintptr_t MAX_STACK_READ = 1u << 20;	/* bytes above the walker's frame */

/* What a return address is. */
enum frame_kind : uint32_t {
	FRAME_SELF = 1,		/* in the library */
	FRAME_WRAPPER = 2,	/* in a declared wrapper (id in `via`) */
	FRAME_OUTSIDE = 3,	/* anywhere else: a caller */
};

/* One return address: its kind and the distance from the slot holding it to the
 * slot holding the next return address up the stack (0: not known). Written under
 * g_insert_lock, key last (release); read without a lock. */
struct frame_entry {
	uintptr_t ra;		/* 0 empty, 1 forgotten */
	uint32_t kind;
	uint32_t via;
	uint32_t step;
	uint32_t unused;
};

constexpr uint32_t FRAME_TABLE_BITS = 14;
constexpr uint32_t FRAME_TABLE_SIZE = 1u << FRAME_TABLE_BITS;
constexpr uint32_t FRAME_PROBES = 16;

frame_entry *g_frames;
pthread_mutex_t g_insert_lock = PTHREAD_MUTEX_INITIALIZER;
pthread_once_t g_once = PTHREAD_ONCE_INIT;
uintptr_t g_self_lo, g_self_hi;	/* the library's own code; empty when linked in */

void setup()
{
	void *m = mmap(nullptr, sizeof(frame_entry) * FRAME_TABLE_SIZE, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (m != MAP_FAILED)
		g_frames = static_cast<frame_entry *>(m);
	object_info self, exe;
	if (describe_object((uintptr_t)&find_wrapped_caller, self) &&
	    !(describe_object((uintptr_t)__builtin_return_address(0), exe) && exe.lo == self.lo)) {
		g_self_lo = self.lo;
		g_self_hi = self.hi;
	}
}

inline uint32_t frame_hash(uintptr_t ra)
{
	return ((uint32_t)ra * 0x9e3779b1u) >> (32 - FRAME_TABLE_BITS);
}

const frame_entry *frame_find(uintptr_t ra)
{
	uint32_t h = frame_hash(ra);
	for (uint32_t i = 0; i < FRAME_PROBES; i++) {
		const frame_entry *e = &g_frames[(h + i) & (FRAME_TABLE_SIZE - 1)];
		uintptr_t key = __atomic_load_n(&e->ra, __ATOMIC_ACQUIRE);
		if (key == ra)
			return e;
		if (key == 0)
			return nullptr;
	}
	return nullptr;
}

void frame_remember(uintptr_t ra, uint32_t kind, uint32_t via, uint32_t step)
{
	pthread_mutex_lock(&g_insert_lock);
	uint32_t h = frame_hash(ra);
	for (uint32_t i = 0; i < FRAME_PROBES; i++) {
		frame_entry *e = &g_frames[(h + i) & (FRAME_TABLE_SIZE - 1)];
		if (e->ra == ra) {
			/* Known: a frame size seen again must agree, or it is not fixed. */
			if (e->step != step)
				__atomic_store_n(&e->step, 0u, __ATOMIC_RELAXED);
			break;
		}
		if (e->ra == 0) {
			e->kind = kind;
			e->via = via;
			e->step = step;
			__atomic_store_n(&e->ra, ra, __ATOMIC_RELEASE);
			break;
		}
	}
	pthread_mutex_unlock(&g_insert_lock);
}

uint32_t kind_of(uintptr_t ra, uint32_t *via)
{
	*via = 0;
	if (ra >= g_self_lo && ra < g_self_hi)
		return FRAME_SELF;
	if ((*via = wrapper_at(ra - 1)) != 0)
		return FRAME_WRAPPER;
	return FRAME_OUTSIDE;
}

struct unwound {
	int n = 0;
	uintptr_t ip[MAX_FRAMES];
	uintptr_t cfa[MAX_FRAMES];	/* the stack pointer in frame i at its call */
};

_Unwind_Reason_Code collect(struct _Unwind_Context *ctx, void *arg)
{
	auto *u = static_cast<unwound *>(arg);
	uintptr_t ip = _Unwind_GetIP(ctx);
	if (!ip || u->n == MAX_FRAMES)
		return _URC_END_OF_STACK;
	u->ip[u->n] = ip;
	u->cfa[u->n] = _Unwind_GetCFA(ctx);
	u->n++;
	return _URC_NO_REASON;
}

/* The slow walk: the unwinder, whose findings are remembered up to the caller found.
 * The slot of ip[i] (i >= 1) is cfa[i] - 8, so the step from ip[i] to ip[i + 1] is
 * cfa[i + 1] - cfa[i]. Frame 0 is this function. */
[[gnu::noinline]] bool unwind_walk(uintptr_t known_ra, wrapped_caller &out)
{
	busy_guard guard;	/* the first unwind through an object may allocate */
	unwound u;
	_Unwind_Backtrace(collect, &u);
	uint32_t kinds[MAX_FRAMES], vias[MAX_FRAMES];
	bool started = false, found = false;
	uint32_t via = 0;
	int last = 0;
	for (int i = 1; i < u.n && !found; i++) {
		kinds[i] = kind_of(u.ip[i], &vias[i]);
		last = i;
		if (!started)
			started = known_ra ? u.ip[i] == known_ra : kinds[i] != FRAME_SELF;
		if (!started)
			continue;
		if (kinds[i] == FRAME_OUTSIDE) {
			out.ra = u.ip[i];
			out.via = via;
			found = true;
		} else if (kinds[i] == FRAME_WRAPPER && vias[i] != WRAPPER_TRANSPARENT) {
			via = vias[i];
		}
	}
	if (g_frames) {
		for (int i = 1; i <= last && i < u.n; i++) {
			uintptr_t step = i + 1 < u.n ? u.cfa[i + 1] - u.cfa[i] : 0;
			bool usable = step > 0 && step < MAX_STACK_READ && !(step & 7);
			frame_remember(u.ip[i], kinds[i], vias[i], usable ? (uint32_t)step : 0);
		}
	}
	return found;
}

} /* namespace */

bool unwind_from(uintptr_t known_ra, uintptr_t base, unwound_path &out)
{
	pthread_once(&g_once, setup);
	busy_guard guard;
	unwound u;
	_Unwind_Backtrace(collect, &u);
	out.entry_offset = 0;
	out.nr = 0;
	out.caller = wrapped_caller{ 0, 0 };
	int i = 1;
	while (i < u.n && u.ip[i] != known_ra)
		i++;
	if (i == u.n)
		return false;
	uintptr_t entry_slot = u.cfa[i] - sizeof(void *);
	if (entry_slot > base && entry_slot - base < 0x10000 && !(entry_slot & 7))
		out.entry_offset = (uint32_t)(entry_slot - base);
	for (; i < u.n; i++) {
		uint32_t via;
		uint32_t kind = kind_of(u.ip[i], &via);
		if (kind == FRAME_OUTSIDE) {
			out.caller.ra = u.ip[i];
			return true;
		}
		if (kind == FRAME_SELF || out.nr == PATH_MAX_FRAMES)
			return false;	/* back in the library (a callback), or too deep */
		uintptr_t step = i + 1 < u.n ? u.cfa[i + 1] - u.cfa[i] : 0;
		bool usable = step > 0 && step < WALK_MAX_STACK && !(step & 7);
		out.frames[out.nr++] = { u.ip[i], usable ? (uint32_t)step : 0, via };
		if (via != WRAPPER_TRANSPARENT)
			out.caller.via = via;
	}
	return false;
}

/* The fast walk: from this function's own return-address slot, known steps. */
[[gnu::noinline]] bool find_wrapped_caller(uintptr_t known_ra, wrapped_caller &out)
{
	pthread_once(&g_once, setup);
	if (!g_frames)
		return unwind_walk(known_ra, out);
	uintptr_t base = (uintptr_t)__builtin_frame_address(0);
	uintptr_t slot = base + sizeof(void *);
	uintptr_t ra = *(const uintptr_t *)slot;
	bool outside = false;
	uint32_t via = 0;
	for (int depth = 0; depth < MAX_FRAMES; depth++) {
		if (ra == known_ra)
			outside = true;
		const frame_entry *e = frame_find(ra);
		if (!e)
			break;
		uint32_t kind = __atomic_load_n(&e->kind, __ATOMIC_RELAXED);
		if (kind == FRAME_OUTSIDE) {
			if (!outside && known_ra)
				break;	/* left the library elsewhere than expected */
			out.ra = ra;
			out.via = via;
			return true;
		}
		if (kind == FRAME_SELF && outside)
			break;	/* back in the library: a path never seen */
		if (kind == FRAME_WRAPPER) {
			outside = true;
			if (e->via != WRAPPER_TRANSPARENT)
				via = e->via;
		}
		uint32_t step = __atomic_load_n(&e->step, __ATOMIC_RELAXED);
		if (!step)
			break;
		slot += step;
		if (slot - base >= MAX_STACK_READ)
			break;
		ra = *(const uintptr_t *)slot;
	}
	return unwind_walk(known_ra, out);
}

void frames_forget(uintptr_t lo, uintptr_t hi)
{
	if (!g_frames)
		return;
	pthread_mutex_lock(&g_insert_lock);
	for (uint32_t i = 0; i < FRAME_TABLE_SIZE; i++) {
		frame_entry *e = &g_frames[i];
		if (e->ra >= lo && e->ra < hi)
			__atomic_store_n(&e->ra, (uintptr_t)1, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&g_insert_lock);
}

} /* namespace allocinfo */
