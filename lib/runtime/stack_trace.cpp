/* SPDX-License-Identifier: MIT */
/* Stacks of sampled allocations: libgcc's unwinder or the frame-pointer chain. */
#include "stack_trace.h"

#include <dlfcn.h>
#include <link.h>
#include <string.h>
#include <unwind.h>

#include "frames.h"
#include "once_flag.h"
#include "options.h"
#include "route.h"	/* code_range() */

namespace allocinfo {
namespace stack_trace {

namespace {

/* A walk sees the library's own frames before the program's: a few more slots. */
constexpr int OWN_FRAMES_MAX = 24;

walker g_walker = walker::unwind;
bool g_prepared;
once_flag g_once;

using backtrace_fn = _Unwind_Reason_Code (*)(_Unwind_Trace_Fn, void *);
using get_ip_fn = _Unwind_Ptr (*)(struct _Unwind_Context *);
using get_gr_fn = _Unwind_Word (*)(struct _Unwind_Context *, int);
backtrace_fn g_backtrace;
get_ip_fn g_get_ip;
get_gr_fn g_get_gr;

/* The library's own code, [g_own_lo, g_own_hi); empty when it is linked into the
 * program (then only the program's return address tells where the program starts). */
uintptr_t g_own_lo, g_own_hi;

bool own(uintptr_t ip)
{
	return ip >= g_own_lo && ip < g_own_hi;
}

/* The unwinder's three functions in h; false (and none kept) unless all are there. */
bool find_unwinder(void *h)
{
	g_get_ip = reinterpret_cast<get_ip_fn>(dlsym(h, "_Unwind_GetIP"));
	g_get_gr = reinterpret_cast<get_gr_fn>(dlsym(h, "_Unwind_GetGR"));
	g_backtrace = reinterpret_cast<backtrace_fn>(dlsym(h, "_Unwind_Backtrace"));
	if (g_get_ip && g_get_gr && g_backtrace)
		return true;
	g_backtrace = nullptr;
	return false;
}

void prepare_once()
{
	busy_guard guard;	/* the loader's allocations are the library's */
	const char *v = find_env("ALLOCINFO_PROFILE_UNWIND");
	if (v && !strcmp(v, "fp"))
		g_walker = walker::fp;
	else if (v && *v && strcmp(v, "unwind"))
		log_message("ALLOCINFO_PROFILE_UNWIND='%.100s' is not 'unwind' or 'fp'; "
			    "using 'unwind'", v);
	Dl_info di;
	if (dladdr(reinterpret_cast<void *>(&capture), &di) && di.dli_fbase) {
		uintptr_t base = (uintptr_t)di.dli_fbase;
		/* dlpi_addr is the load bias, which is the base for a shared object. */
		code_range(base, &g_own_lo, &g_own_hi);
	}
	/* The process's own unwinder, else libgcc_s's, as the wrapper walk finds it. */
	void *h;
	if (unwinder_library(&h))
		find_unwinder(h);
	if (!g_backtrace)
		log_message("cannot load libgcc_s.so.1's unwinder; sampled stacks keep "
			    "their first frame only");
	__atomic_store_n(&g_prepared, true, __ATOMIC_RELEASE);
}

struct walk {
	void **frames;
	int n, max;
};

_Unwind_Reason_Code on_frame(struct _Unwind_Context *ctx, void *arg)
{
	auto *w = static_cast<walk *>(arg);
	if (w->n >= w->max)
		return _URC_END_OF_STACK;
	uintptr_t ip = g_get_ip(ctx);
	if (!ip)
		return _URC_END_OF_STACK;
	w->frames[w->n++] = reinterpret_cast<void *>(ip);
	return _URC_NO_REASON;
}

/* The frame-pointer walk's first step: libgcc's unwinder through the library's own
 * frames (built without frame pointers, they keep other values in rbp) to the
 * program's allocation call, whose rbp it restores. */
struct entry {
	uintptr_t ra;		/* the program's return address, or 0 */
	uintptr_t ip, fp;	/* found: the program's frame and its rbp */
	int steps;
};

_Unwind_Reason_Code find_entry(struct _Unwind_Context *ctx, void *arg)
{
	auto *e = static_cast<entry *>(arg);
	uintptr_t ip = g_get_ip(ctx);
	if (!ip || ++e->steps > OWN_FRAMES_MAX)
		return _URC_END_OF_STACK;
	if (e->ra ? ip == e->ra : (g_own_hi && !own(ip) && e->steps > 1)) {
		e->ip = ip;
		e->fp = g_get_gr(ctx, 6);	/* DWARF register 6: rbp */
		return _URC_END_OF_STACK;
	}
	return _URC_NO_REASON;
}

/* The frame-pointer chain from the program's frame: each step must go up the stack,
 * stay inside it and stay aligned. */
int walk_fp(void **frames, int max, uintptr_t ra)
{
	entry e = { ra, 0, 0, 0 };
	g_backtrace(find_entry, &e);
	if (!e.ip)
		return 0;
	frames[0] = reinterpret_cast<void *>(e.ip);
	int n = 1;
	uintptr_t lo = reinterpret_cast<uintptr_t>(__builtin_frame_address(0));
	uintptr_t last = stack_last_word(lo), fp = e.fp;
	while (n < max && fp > lo && !(fp & 7) && fp + 8 <= last) {
		auto *f = reinterpret_cast<uintptr_t *>(fp);
		uintptr_t next = f[0], ret = f[1];
		if (!ret)
			break;
		frames[n++] = reinterpret_cast<void *>(ret);
		if (next <= fp)
			break;
		fp = next;
	}
	return n;
}

} /* namespace */

void prepare()
{
	g_once.call(prepare_once);
}

int capture(void **frames, int max, uintptr_t ra)
{
	if (max <= 0 || !__atomic_load_n(&g_prepared, __ATOMIC_ACQUIRE))
		return 0;
	void *raw[ALLOCINFO_PROFILE_FRAMES_MAX + OWN_FRAMES_MAX];
	int cap = max + OWN_FRAMES_MAX, n = 0;
	if (cap > (int)(sizeof(raw) / sizeof(raw[0])))
		cap = (int)(sizeof(raw) / sizeof(raw[0]));
	if (own(ra))	/* an entry point that was not reached by a tail call */
		ra = 0;
	busy_guard guard;	/* anything the walk allocates is the library's */
	if (!g_backtrace) {
		/* no unwinder: the first frame only, below */
	} else if (g_walker == walker::fp) {
		/* Starts at the program's frame: nothing of the library's to skip. */
		n = walk_fp(frames, max, ra);
		if (n > 0 || !ra)
			return n;
		frames[0] = reinterpret_cast<void *>(ra);
		return 1;
	} else {
		walk w = { raw, 0, cap };
		g_backtrace(on_frame, &w);
		n = w.n;
	}
	/* Where the program starts: its allocation call when it is in the walk, else the
	 * first frame outside the library. */
	int from = -1;
	for (int i = 0; ra && i < n; i++)
		if ((uintptr_t)raw[i] == ra) {
			from = i;
			break;
		}
	int out = 0;
	if (from < 0) {
		if (ra)
			frames[out++] = reinterpret_cast<void *>(ra);
		from = 0;
		if (g_own_hi)
			while (from < n && own((uintptr_t)raw[from]))
				from++;
	}
	for (int i = from; i < n && out < max; i++)
		frames[out++] = raw[i];
	return out;
}

} /* namespace stack_trace */
} /* namespace allocinfo */
