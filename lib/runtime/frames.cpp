/* SPDX-License-Identifier: MIT */
/* Stack walks out of wrappers with the unwinder, for the caller table to remember. */
#include "frames.h"

#include <dlfcn.h>
#include <pthread.h>
#include <sys/auxv.h>
#include <sys/resource.h>
#include <unistd.h>
#include <unwind.h>

#include "backend.h"
#include "cfi_unwind.h"
#include "library_dlopen.h"
#include "once_flag.h"
#include "registry.h"
#include "stack_attr.h"
#include "table_pages.h"
#include "wrappers.h"

namespace allocinfo {

namespace {

constexpr int MAX_FRAMES = 64;

/* What a return address is. */
enum frame_kind : uint32_t {
	FRAME_SELF = 1,		/* in the library */
	FRAME_WRAPPER = 2,	/* in a wrapper (its id beside) */
	FRAME_OUTSIDE = 3,	/* anywhere else: a caller */
};

once_flag g_once;
once_flag g_unwinder_once;
uintptr_t g_self_lo, g_self_hi;	/* the library's own code; empty when linked in */

/* For the frames cfi_unwind.h cannot walk, libgcc_s's unwinder, found at run time as
 * glibc's backtrace() finds it: the library itself depends on libc alone, and a C
 * program may never load libgcc_s. */
_Unwind_Reason_Code (*g_backtrace)(_Unwind_Trace_Fn, void *);
_Unwind_Ptr (*g_get_ip)(struct _Unwind_Context *);
_Unwind_Word (*g_get_cfa)(struct _Unwind_Context *);

} /* namespace */

__thread stack_range t_stack __attribute__((tls_model("initial-exec")));

/* The loader's stack pointer at the program's start (exported by ld.so): argv, the
 * environment and the auxiliary vector lie above it, mapped. */
extern "C" void *__libc_stack_end;

stack_range find_this_stack()
{
	/* The main thread's: from the loader's start and the stack's limit. For it,
	 * pthread_getattr_np() reads /proc/self/maps, about 100,000 instructions and
	 * three system calls in every process whose first walk is on it. */
	struct rlimit rl;
	if (gettid() == getpid() && getrlimit(RLIMIT_STACK, &rl) == 0 &&
	    rl.rlim_cur != RLIM_INFINITY && __libc_stack_end) {
		uintptr_t top = (uintptr_t)__libc_stack_end & ~(uintptr_t)(sizeof(uintptr_t) - 1);
		if (rl.rlim_cur < top) {
			t_stack = { top - (uintptr_t)rl.rlim_cur, (uintptr_t)rl.rlim_cur + sizeof(uintptr_t),
				    top };
			return t_stack;
		}
	}
	/* Inside pthread_getattr_np() this thread holds the lock it would wait for. */
	if (t_in_getattr)
		return { UINTPTR_MAX, 1, 0 };
	busy_guard guard;	/* reading the main thread's mapping allocates */
	pthread_attr_t attr;
	if (pthread_getattr_np(pthread_self(), &attr) == 0) {
		void *lo;
		size_t size;
		if (pthread_attr_getstack(&attr, &lo, &size) == 0 && size)
			t_stack = { (uintptr_t)lo, size, (uintptr_t)lo + size - sizeof(uintptr_t) };
		pthread_attr_destroy(&attr);
	}
	/* Not known (the main thread's needs /proc): asked once, and no frame is on it. */
	if (!t_stack.size)
		t_stack = { UINTPTR_MAX, 1, 0 };
	return t_stack;
}

bool unwinder_library(void **handle)
{
	/* One the program has (C++, or linked in), else libgcc_s loaded now. Not loaded
	 * in a sanitizer build, nor over a sanitizer's allocator: its leak checker takes
	 * what dlopen allocates from inside malloc for a leak; there, walks need an
	 * unwinder the program has. */
	void *h = RTLD_DEFAULT;	/* a null handle itself */
	if (!dlsym(h, "_Unwind_Backtrace")) {
		h = library_dlopen("libgcc_s.so.1", RTLD_NOW | RTLD_NOLOAD);
		if (!h && !RECORD_ALWAYS && !backend::g_sanitizer)
			h = library_dlopen("libgcc_s.so.1", RTLD_NOW);
		if (!h)
			return false;
	}
	*handle = h;
	return true;
}

namespace {

void find_unwinder()
{
	void *h;
	if (!unwinder_library(&h))
		return;
	auto *bt = reinterpret_cast<decltype(g_backtrace)>(dlsym(h, "_Unwind_Backtrace"));
	auto *ip = reinterpret_cast<decltype(g_get_ip)>(dlsym(h, "_Unwind_GetIP"));
	auto *cfa = reinterpret_cast<decltype(g_get_cfa)>(dlsym(h, "_Unwind_GetCFA"));
	if (bt && ip && cfa) {
		g_get_ip = ip;
		g_get_cfa = cfa;
		g_backtrace = bt;
	}
}

/* Once (once_flag.h), so its two object_info (PATH_MAX buffers) need not be on the
 * stack: this may run in the first walk of a PTHREAD_STACK_MIN thread. The library is
 * linked in when its code is the executable's, whose entry point the kernel gives. */
void setup()
{
	static object_info self, exe;
	if (describe_object((uintptr_t)&unwind_from, self) &&
	    !(describe_object((uintptr_t)getauxval(AT_ENTRY), exe) && exe.lo == self.lo)) {
		g_self_lo = self.lo;
		g_self_hi = self.hi;
	}
}

uint32_t kind_of(uintptr_t ra, uint32_t *via)
{
	*via = 0;
	if (unlikely(in_stack_attr(ra - 1))) {	/* a libc function, in front of it */
		*via = WRAPPER_TRANSPARENT;
		return FRAME_WRAPPER;
	}
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
	uint32_t kind[MAX_FRAMES];	/* from the entry on: kind_of() of ip[i] */
	uint32_t via[MAX_FRAMES];	/* and its wrapper */
	uintptr_t known_ra;		/* the entry's return address; 0: the first outside us */
	int entry = 0;			/* the entry's frame, once collected (frame 0 is
					 * unwind_from() itself, never the entry) */
};

/* Collects frames up to the first one, from the entry (unwind_from()'s known_ra,
 * else the first frame outside the library) on, that is not a wrapper's: the caller
 * looked for, or the library again. The frames above it are never needed, and
 * libgcc's unwinder costs thousands of instructions a frame: walking the whole stack,
 * a short process (git rev-parse) spent a quarter more instructions than this.
 * False: stop. */
bool collect(void *arg, uintptr_t ip, uintptr_t cfa)
{
	auto *u = static_cast<unwound *>(arg);
	if (!ip || u->n == MAX_FRAMES)
		return false;
	int i = u->n++;
	u->ip[i] = ip;
	u->cfa[i] = cfa;
	if (!u->entry) {
		bool entry = i > 0 && (u->known_ra ? ip == u->known_ra
						   : ip < g_self_lo || ip >= g_self_hi);
		if (!entry)
			return true;
		u->entry = i;
	}
	u->kind[i] = kind_of(ip, &u->via[i]);
	return u->kind[i] == FRAME_WRAPPER;
}

_Unwind_Reason_Code collect_libgcc(struct _Unwind_Context *ctx, void *arg)
{
	return collect(arg, g_get_ip(ctx), g_get_cfa(ctx)) ? _URC_NO_REASON : _URC_END_OF_STACK;
}

} /* namespace */

void prepare_unwinder()
{
	busy_guard guard;
	g_once.call(setup);
	g_unwinder_once.call(find_unwinder);
}

/* Frame 0 is this function; the slot holding ip[i] (i >= 1) is cfa[i] - 8, so the
 * step from ip[i] to ip[i + 1] is cfa[i + 1] - cfa[i]. */
bool unwind_from(uintptr_t known_ra, uintptr_t base, unwound_path &out)
{
	busy_guard guard;	/* also for setup()'s dlopen: its allocations are not counted */
	g_once.call(setup);
	unwound u;
	u.known_ra = known_ra;
	/* The unwind tables read here first; libgcc's unwinder for what they cannot
	 * walk (loaded then), from the start again. */
	cfi::tables_read read;
	cfi::walk_end end = cfi::walk(collect, &u, &read);
	tables_after_walk(read);
	if (end == cfi::walk_end::unknown) {
		g_unwinder_once.call(find_unwinder);
		if (!g_backtrace)
			return false;	/* no unwinder: the allocation is charged where it is */
		u = unwound();
		u.known_ra = known_ra;
		g_backtrace(collect_libgcc, &u);
	}
	out.entry_offset = 0;
	out.nr = 0;
	out.caller = wrapped_caller{ 0, 0 };
	int i = u.entry;
	if (!i || (!known_ra && g_self_lo == g_self_hi))
		return false;
	out.entry_ra = u.ip[i];
	uintptr_t entry_slot = u.cfa[i] - sizeof(void *);
	if (entry_slot > base && entry_slot - base < 0x10000 && !(entry_slot & 7))
		out.entry_offset = (uint32_t)(entry_slot - base);
	for (; i < u.n; i++) {
		uint32_t kind = u.kind[i], via = u.via[i];
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

} /* namespace allocinfo */
