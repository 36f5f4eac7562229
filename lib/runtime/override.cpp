/* SPDX-License-Identifier: MIT */
/*
 * Every exported allocation entry point: the malloc family (which interposes glibc's
 * for the whole process), the allocinfo_* entry points that take a call site, the
 * _noprof variants, C++ operator new/delete in all their forms, and dlclose (to
 * notice unloaded objects).
 *
 * Each is the same few lines: settle the process state on the rare path, pick the
 * slot, allocate or release. The return address passed down is the program's call.
 */
#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <new>

#include "alloc.h"
#include "callbacks.h"
#include "foreign_path.h"
#include "next_definition.h"
#include "options.h"
#include "route.h"
#include "table_pages.h"

using namespace allocinfo;

#define RA() ((uintptr_t)__builtin_return_address(0))

namespace {

inline size_t page_size()
{
	static size_t ps;
	if (!ps)
		ps = (size_t)sysconf(_SC_PAGESIZE);
	return ps;
}

/*
 * The entry points share these bodies. Each tests the one `go` word and jumps to its
 * fast or its slow half, both out of line: the test then runs before any register is
 * saved (ALLOCINFO=0 costs a few instructions), and the slow half, which allocates
 * plainly when counting is off, keeps the fast half small.
 */
template <bool Zero>
[[gnu::noinline]] void *malloc_fast(size_t n, uintptr_t ra)
{
	return allocate(slot_for_caller(ra), n, Zero);
}

/* The plan of a malloc or calloc the program called: over a sanitizer with new kinds,
 * its block is marked so (RECORD_F_MALLOC), and a delete of it is the sanitizer's to
 * judge. */
inline slow_plan malloc_plan()
{
	slow_plan plan = slow_mode();
	if (unlikely(backend::g_new_kinds) && (plan.flags & RECORD_F_FOREIGN))
		plan.flags |= RECORD_F_MALLOC;
	return plan;
}

[[gnu::noinline]] void *malloc_slow(size_t n, bool zero, uintptr_t ra)
{
	if (unlikely(callbacks::wanted()))
		return callbacks::allocate(zero ? ALLOCINFO_OP_CALLOC : ALLOCINFO_OP_MALLOC,
					   { nullptr, ra }, n, 0, 0, zero);
	slow_plan plan = malloc_plan();
	if (plan.mode == how::counted)
		return allocate_flagged(slot_for_caller(ra), n, zero, plan.flags);
	return allocate_planned(plan, n, zero);
}

template <bool Zero>
[[gnu::noinline]] void *site_malloc_fast(const alloc_tag *t, size_t n)
{
	return allocate(slot_for_site(t), n, Zero);
}

/* Reached from the entry point by tail calls (site_malloc_off's, the entry's), so its
 * return address is the program's call, for the sampler's stacks; the fast path then
 * passes nothing more. Otherwise it is the library's, which the sampler ignores. */
[[gnu::noinline]] void *site_malloc_slow(const alloc_tag *t, size_t n, bool zero)
{
	if (unlikely(callbacks::wanted()))
		return callbacks::allocate(zero ? ALLOCINFO_OP_CALLOC : ALLOCINFO_OP_MALLOC,
					   { t, RA() }, n, 0, 0, zero);
	slow_plan plan = malloc_plan();
	if (plan.mode == how::counted)
		return allocate_flagged(slot_for_site(t), n, zero, plan.flags);
	return allocate_planned(plan, n, zero);
}

/* ALLOCINFO=0 stops here: plain blocks, no record. */
template <bool Zero>
[[gnu::noinline]] void *malloc_off(size_t n, uintptr_t ra)
{
	if (likely(__atomic_load_n(&g_fast.plain_when_off, __ATOMIC_RELAXED)))
		return Zero ? backend::calloc(1, n) : backend::malloc(n);
	if (foreign_go())	/* another allocator first (foreign_path.h) */
		return foreign_malloc<Zero>(n, ra);
	return malloc_slow(n, Zero, ra);
}

template <bool Zero>
[[gnu::noinline]] void *site_malloc_off(const alloc_tag *t, size_t n)
{
	if (likely(__atomic_load_n(&g_fast.plain_when_off, __ATOMIC_RELAXED)))
		return Zero ? backend::calloc(1, n) : backend::malloc(n);
	if (foreign_go())
		return foreign_site_malloc<Zero>(t, n);
	return site_malloc_slow(t, n, Zero);
}

/* Start-up made, by a test rather than a call: ALLOCINFO=0 over glibc comes through
 * exported_off() with each allocation. */
inline void started()
{
	uint32_t state = __atomic_load_n(&g_fast.state, __ATOMIC_ACQUIRE);
	if (unlikely(state != STATE_RUNNING && state != STATE_NEVER))
		ensure_init();
}

/* The exported malloc's and calloc's way off the fast path: a call passed on to the
 * library by the object before it (backend::g_passing_on) goes below. */
template <bool Zero>
[[gnu::noinline]] void *exported_off(size_t n, uintptr_t ra)
{
	started();	/* the first call of all may be one passed on */
	if (unlikely(backend::g_passing_on))
		return Zero ? backend::below.calloc(1, n) : backend::below.malloc(n);
	if (likely(fast_go()))	/* started just now: counted, as before it */
		return malloc_fast<Zero>(n, ra);
	return malloc_off<Zero>(n, ra);
}

template <bool Exported = false>
inline void *do_malloc(size_t n, uintptr_t ra)
{
	if (likely(fast_go()))
		return malloc_fast<false>(n, ra);
	return Exported ? exported_off<false>(n, ra) : malloc_off<false>(n, ra);
}

inline void *do_site_malloc(const alloc_tag *t, size_t n, bool zero)
{
	if (likely(fast_go()))
		return zero ? site_malloc_fast<true>(t, n) : site_malloc_fast<false>(t, n);
	return zero ? site_malloc_off<true>(t, n) : site_malloc_off<false>(t, n);
}

inline void *do_site_calloc(const alloc_tag *t, size_t n, size_t m)
{
	size_t total;
	if (__builtin_mul_overflow(n, m, &total)) {
		errno = ENOMEM;
		return nullptr;
	}
	return do_site_malloc(t, total, true);
}

template <bool Exported = false>
inline void *do_calloc(size_t n, size_t m, uintptr_t ra)
{
	size_t total;
	if (__builtin_mul_overflow(n, m, &total)) {
		errno = ENOMEM;
		return nullptr;
	}
	if (likely(fast_go()))
		return malloc_fast<true>(total, ra);
	return Exported ? exported_off<true>(total, ra) : malloc_off<true>(total, ra);
}

/* slot_fn is called only when the allocation is counted; cs is the same call site,
 * for callbacks. */
template <typename SlotFn>
inline void *do_aligned(size_t align, size_t n, SlotFn slot_fn, callbacks::site cs,
			size_t reserve = 0)
{
	if (likely(fast_go()))
		return allocate_aligned(slot_fn(), align, n, reserve);
	if (unlikely(callbacks::wanted()))
		return callbacks::allocate(ALLOCINFO_OP_ALIGNED, cs, n, align, reserve, false);
	slow_plan plan = slow_mode();
	switch (plan.mode) {
	case how::never:
	case how::off:
		return backend::memalign_plain(align, reserve > n ? reserve : n);
	case how::discard:
		return allocate_aligned(ALLOCINFO_TAG_DISCARD, align, n, reserve, plan.flags);
	case how::counted:
		break;
	}
	return allocate_aligned(slot_fn(), align, n, reserve, plan.flags);
}

/* pvalloc: whole pages for the block; the caller is charged what it asked. Rounded
 * as glibc rounds (its mask keeps the lowest bit, so pvalloc(0) is a minimal block,
 * as there). */
inline bool pvalloc_size(size_t n, size_t *rounded)
{
	size_t ps = page_size();
	if (__builtin_add_overflow(n, ps - 1, rounded)) {
		errno = ENOMEM;
		return false;
	}
	*rounded &= -(ps - 1);
	return true;
}

template <typename SlotFn>
inline void *do_realloc(void *p, size_t n, SlotFn slot_fn, callbacks::site cs,
			bool exported = false)
{
	slow_plan plan = { how::counted, 0 };
	if (unlikely(!fast_go())) {
		/* passed on by the object before the library (exported_off()) */
		if (exported) {
			started();
			if (unlikely(backend::g_passing_on) && !block_is_ours(p))
				return backend::below.realloc(p, n);
		}
		if (backend::g_no_records)	/* ALLOCINFO=never over another allocator */
			return backend::foreign.realloc(p, n);
		if (unlikely(callbacks::wanted()))
			return callbacks::reallocate(cs, p, n);
		plan = slow_mode();
		if (plan.mode == how::never)
			return backend::realloc_plain(p, n);
	}
	if (n == 0 && p) {	/* glibc frees and returns NULL */
		release(p);
		return nullptr;
	}
	if (unlikely(plan.mode == how::off))
		return p ? reallocate_off(p, n) : backend::malloc(n);
	uint32_t slot = plan.mode == how::discard ? ALLOCINFO_TAG_DISCARD : slot_fn();
	if (!p)
		return allocate_flagged(slot, n, false, plan.flags);
	return reallocate(slot, p, n, plan.flags);
}

/* Exported: the exported free(), which a call passed on reaches (exported_off()). */
template <bool Exported = false>
inline void do_free(void *p, int op = ALLOCINFO_OP_FREE)
{
	if (unlikely(!p))
		return;
	if (RECORD_ALWAYS) {	/* a sanitizer's block: do not read below it unless ours */
		uint32_t s = __atomic_load_n(&g_fast.state, __ATOMIC_ACQUIRE);
		if (s == STATE_NEVER || s == STATE_UNINIT) {
			backend::free(p);
			return;
		}
	}
	release<Exported>(p, op);
}

inline void do_delete(void *p) { do_free(p, ALLOCINFO_OP_DELETE); }
inline void do_delete_array(void *p) { do_free(p, OP_DELETE_ARRAY); }

inline int do_posix_memalign(void **pp, size_t align, size_t n, void *(*alloc)(size_t, size_t,
										     uintptr_t),
			     uintptr_t ra)
{
	if (align == 0 || (align & (align - 1)) || align % sizeof(void *))
		return EINVAL;
	int saved = errno;
	void *p = alloc(align, n, ra);
	if (!p) {
		int err = errno;
		errno = saved;
		return err == EINVAL ? EINVAL : ENOMEM;
	}
	*pp = p;
	return 0;
}

void *caller_memalign(size_t align, size_t n, uintptr_t ra)
{
	return do_aligned(align, n, [ra] { return slot_for_caller(ra); }, { nullptr, ra });
}

KEEPS_FRAME
int vasprintf_into(char **strp, const char *fmt, va_list ap, const alloc_tag *site, uintptr_t ra)
{
	va_list copy;
	va_copy(copy, ap);
	char small[256];
	int len = vsnprintf(small, sizeof(small), fmt, copy);
	va_end(copy);
	if (len < 0)
		return -1;
	char *p = static_cast<char *>(site ? do_site_malloc(site, (size_t)len + 1, false)
					   : do_malloc((size_t)len + 1, ra));
	if (!p)
		return -1;
	if ((size_t)len < sizeof(small))
		memcpy(p, small, (size_t)len + 1);
	else
		vsnprintf(p, (size_t)len + 1, fmt, ap);
	*strp = p;
	return len;
}

KEEPS_FRAME
char *dup_string(const char *s, size_t n, const alloc_tag *site, uintptr_t ra)
{
	char *p = static_cast<char *>(site ? do_site_malloc(site, n + 1, false) : do_malloc(n + 1, ra));
	if (p) {
		memcpy(p, s, n);
		p[n] = '\0';
	}
	return p;
}

} /* namespace */

extern "C" {

/* ---- the malloc family ---------------------------------------------------------- */

EXPORT void *malloc(size_t n) { return do_malloc<true>(n, RA()); }
EXPORT void free(void *p) { do_free<true>(p); }
EXPORT void *calloc(size_t n, size_t m) { return do_calloc<true>(n, m, RA()); }

EXPORT void *realloc(void *p, size_t n)
{
	uintptr_t ra = RA();
	return do_realloc(p, n, [ra] { return slot_for_caller(ra); }, { nullptr, ra }, true);
}

EXPORT void *reallocarray(void *p, size_t n, size_t m)
{
	size_t total;
	if (__builtin_mul_overflow(n, m, &total)) {
		errno = ENOMEM;
		return nullptr;
	}
	uintptr_t ra = RA();
	return do_realloc(p, total, [ra] { return slot_for_caller(ra); }, { nullptr, ra });
}

EXPORT void *memalign(size_t align, size_t n) { return caller_memalign(align, n, RA()); }
EXPORT void *aligned_alloc(size_t align, size_t n) { return caller_memalign(align, n, RA()); }
EXPORT void *valloc(size_t n) { return caller_memalign(page_size(), n, RA()); }

EXPORT void *pvalloc(size_t n)
{
	size_t rounded;
	uintptr_t ra = RA();
	if (!pvalloc_size(n, &rounded))
		return nullptr;
	return do_aligned(page_size(), n, [ra] { return slot_for_caller(ra); }, { nullptr, ra },
			  rounded);
}

KEEPS_FRAME
EXPORT int posix_memalign(void **pp, size_t align, size_t n)
{
	return do_posix_memalign(pp, align, n, caller_memalign, RA());
}

EXPORT size_t malloc_usable_size(void *p) { return block_usable_size(p); }

/* ---- the _noprof variants: charged to the current tag, else to the caller --------
 * That is what the plain entry points do for a call with no tag, so the malloc
 * family's variants are the same functions under a second name. */

#if defined(__GNUC__) && !defined(__clang__)
/* copy(): the alias carries the attributes glibc's header gives its target. */
#define NOPROF_ALIAS(fn) __attribute__((alias(#fn), copy(fn), visibility("default")))
#else
#define NOPROF_ALIAS(fn) __attribute__((alias(#fn), visibility("default")))
#endif
void *malloc_noprof(size_t n) NOPROF_ALIAS(malloc);
void *calloc_noprof(size_t n, size_t m) NOPROF_ALIAS(calloc);
void *realloc_noprof(void *p, size_t n) NOPROF_ALIAS(realloc);
void *reallocarray_noprof(void *p, size_t n, size_t m) NOPROF_ALIAS(reallocarray);
void *memalign_noprof(size_t a, size_t n) NOPROF_ALIAS(memalign);
void *aligned_alloc_noprof(size_t a, size_t n) NOPROF_ALIAS(aligned_alloc);
void *valloc_noprof(size_t n) NOPROF_ALIAS(valloc);
void *pvalloc_noprof(size_t n) NOPROF_ALIAS(pvalloc);
int posix_memalign_noprof(void **pp, size_t a, size_t n) NOPROF_ALIAS(posix_memalign);

EXPORT char *strdup_noprof(const char *s) { return dup_string(s, strlen(s), nullptr, RA()); }
EXPORT char *strndup_noprof(const char *s, size_t n)
{
	return dup_string(s, strnlen(s, n), nullptr, RA());
}

EXPORT int vasprintf_noprof(char **strp, const char *fmt, va_list ap)
{
	return vasprintf_into(strp, fmt, ap, nullptr, RA());
}

KEEPS_FRAME
EXPORT int asprintf_noprof(char **strp, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int r = vasprintf_into(strp, fmt, ap, nullptr, RA());
	va_end(ap);
	return r;
}

/* ---- entry points with an explicit call site (the header's macros) --------------- */

EXPORT void *allocinfo_malloc(const alloc_tag *t, size_t n) { return do_site_malloc(t, n, false); }

EXPORT void *allocinfo_calloc(const alloc_tag *t, size_t n, size_t m)
{
	return do_site_calloc(t, n, m);
}

EXPORT void *allocinfo_realloc(const alloc_tag *t, void *p, size_t n)
{
	return do_realloc(p, n, [t] { return slot_for_site(t); }, { t, 0 });
}

EXPORT void *allocinfo_reallocarray(const alloc_tag *t, void *p, size_t n, size_t m)
{
	size_t total;
	if (__builtin_mul_overflow(n, m, &total)) {
		errno = ENOMEM;
		return nullptr;
	}
	return do_realloc(p, total, [t] { return slot_for_site(t); }, { t, 0 });
}

static void *site_memalign(const alloc_tag *t, size_t align, size_t n)
{
	return do_aligned(align, n, [t] { return slot_for_site(t); }, { t, 0 });
}

EXPORT void *allocinfo_memalign(const alloc_tag *t, size_t a, size_t n)
{
	return site_memalign(t, a, n);
}

EXPORT void *allocinfo_aligned_alloc(const alloc_tag *t, size_t a, size_t n)
{
	return site_memalign(t, a, n);
}

EXPORT void *allocinfo_valloc(const alloc_tag *t, size_t n) { return site_memalign(t, page_size(), n); }

EXPORT void *allocinfo_pvalloc(const alloc_tag *t, size_t n)
{
	size_t rounded;
	if (!pvalloc_size(n, &rounded))
		return nullptr;
	return do_aligned(page_size(), n, [t] { return slot_for_site(t); }, { t, 0 }, rounded);
}

KEEPS_FRAME
EXPORT int allocinfo_posix_memalign(const alloc_tag *t, void **pp, size_t a, size_t n)
{
	if (a == 0 || (a & (a - 1)) || a % sizeof(void *))
		return EINVAL;
	int saved = errno;
	void *p = site_memalign(t, a, n);
	if (!p) {
		int err = errno;
		errno = saved;
		return err == EINVAL ? EINVAL : ENOMEM;
	}
	*pp = p;
	return 0;
}

EXPORT char *allocinfo_strdup(const alloc_tag *t, const char *s)
{
	return dup_string(s, strlen(s), t, 0);
}

EXPORT char *allocinfo_strndup(const alloc_tag *t, const char *s, size_t n)
{
	return dup_string(s, strnlen(s, n), t, 0);
}

EXPORT int allocinfo_vasprintf(const alloc_tag *t, char **strp, const char *fmt, va_list ap)
{
	return vasprintf_into(strp, fmt, ap, t, 0);
}

KEEPS_FRAME
EXPORT int allocinfo_asprintf(const alloc_tag *t, char **strp, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int r = vasprintf_into(strp, fmt, ap, t, 0);
	va_end(ap);
	return r;
}

/* ---- dlclose: objects that leave take their tags to the unloaded state ----------- */

EXPORT int dlclose(void *handle)
{
	static int (*next)(void *);
	auto fn = next_definition(&next, "dlclose");
	route_before_dlclose();
	tables_before_dlclose();
	int r = fn(handle);
	tables_after_dlclose();
	route_after_dlclose();
	scan_unloaded();
	return r;
}

} /* extern "C" */

/* ---- C++ operator new and delete -------------------------------------------------- */

/*
 * The C++ runtime's part of operator new, reached through weak references:
 * liballocinfo does not depend on libstdc++ (a C program never loads it), and a
 * program that calls operator new has it. std::get_new_handler() and
 * std::__throw_bad_alloc() by their symbols; the personality routine and the catch
 * functions the nothrow variants' handler uses are made weak too.
 */
extern "C" {
std::new_handler _ZSt15get_new_handlerv() __attribute__((weak));
[[noreturn]] void _ZSt17__throw_bad_allocv() __attribute__((weak));
}
asm(".weak __gxx_personality_v0\n\t.weak __cxa_begin_catch\n\t.weak __cxa_end_catch\n\t"
    ".weak _ZSt9terminatev");

namespace {

std::new_handler current_new_handler()
{
	return _ZSt15get_new_handlerv ? _ZSt15get_new_handlerv() : nullptr;
}

[[noreturn]] void throw_bad_alloc()
{
	if (_ZSt17__throw_bad_allocv)
		_ZSt17__throw_bad_allocv();
	log_message("operator new: out of memory, and no C++ runtime to throw std::bad_alloc");
	abort();
}

} /* namespace */

void *allocinfo::new_failed(size_t n, size_t align, uintptr_t ra, bool nothrow)
{
	for (;;) {
		std::new_handler h = current_new_handler();
		if (!h) {
			if (nothrow)
				return nullptr;
			throw_bad_alloc();
		}
		h();
		void *p = align ? caller_memalign(align, n, ra) : do_malloc(n, ra);
		if (p)
			return p;
	}
}

namespace {

/* new_fast's retries after the new handler, charged to the slot it chose: so the
 * return address need not stay live across the call into glibc. */
[[gnu::noinline]] void *new_failed_at(size_t n, uint32_t slot)
{
	for (;;) {
		std::new_handler h = current_new_handler();
		if (!h)
			throw_bad_alloc();
		h();
		void *p;
		if (fast_go()) {
			p = allocate(slot, n, false);
		} else {
			slow_plan plan = slow_mode();
			p = plan.mode == how::counted ? allocate_flagged(slot, n, false, plan.flags)
						      : allocate_planned(plan, n, false);
		}
		if (p)
			return p;
	}
}

/* The two halves of new, each ending in a tail call when memory is there. */
[[gnu::noinline]] void *new_fast(size_t n, uintptr_t ra)
{
	uint32_t slot = slot_for_caller(ra);
	void *p = allocate(slot, n, false);
	return likely(p != nullptr) ? p : new_failed_at(n, slot);
}

/* new while user callbacks are registered. */
KEEPS_FRAME
[[gnu::noinline]] void *new_with_callbacks(size_t n, size_t align, uintptr_t ra, bool nothrow)
{
	void *p = callbacks::allocate(ALLOCINFO_OP_NEW, { nullptr, ra }, n, align, 0, false);
	return likely(p != nullptr) ? p : new_failed(n, align, ra, nothrow);
}

/* new (Array false) or new[] over a sanitizer with new kinds (backend::g_new_kinds):
 * the block, counted or not, comes from its own; null when there is no memory. */
template <bool Array>
KEEPS_FRAME [[gnu::noinline]] void *new_of_kind(size_t n, uintptr_t ra)
{
	slow_plan plan = slow_mode();
	if (!(plan.flags & RECORD_F_FOREIGN))	/* never: the sanitizer's own, plain */
		return allocate_planned(plan, n, false);
	uint32_t slot = plan.mode == how::counted ? slot_for_caller(ra) : ALLOCINFO_TAG_DISCARD;
	return allocate_foreign_new(slot, n, Array, plan.flags);
}

/* Another allocator first is tested before callbacks: its path is closed while
 * any are registered (foreign_path.h). */
template <bool Array>
KEEPS_FRAME
[[gnu::noinline]] void *new_off(size_t n, uintptr_t ra)
{
	if (foreign_go())
		return foreign_new(n, ra);
	if (unlikely(callbacks::wanted()))
		return new_with_callbacks(n, 0, ra, false);
	void *p = unlikely(backend::g_new_kinds) ? new_of_kind<Array>(n, ra)
						 : malloc_off<false>(n, ra);
	return likely(p != nullptr) ? p : new_failed(n, 0, ra, false);
}

template <bool Array = false>
inline void *do_new(size_t n, uintptr_t ra)
{
	if (likely(fast_go()))
		return new_fast(n, ra);
	return new_off<Array>(n, ra);
}

inline void *do_new_aligned(size_t n, std::align_val_t a, uintptr_t ra)
{
	if (unlikely(callbacks::wanted()))
		return new_with_callbacks(n, (size_t)a, ra, false);
	void *p = caller_memalign((size_t)a, n, ra);
	return likely(p != nullptr) ? p : new_failed(n, (size_t)a, ra, false);
}

template <bool Array = false>
inline void *do_new_nothrow(size_t n, size_t align, uintptr_t ra) noexcept
{
	if (unlikely(callbacks::wanted())) {
		try {
			return new_with_callbacks(n, align, ra, true);
		} catch (...) {
			return nullptr;
		}
	}
	void *p = align ? caller_memalign(align, n, ra)
		: unlikely(backend::g_new_kinds) ? new_of_kind<Array>(n, ra)
		: do_malloc(n, ra);
	if (likely(p != nullptr))
		return p;
	try {
		return new_failed(n, align, ra, true);
	} catch (...) {
		return nullptr;
	}
}

/* Sized delete: under ALLOCINFO_DEBUG, a size that differs from the allocation's is
 * reported (it is undefined behaviour that other allocators punish). A pointer without
 * a record is for the delete itself to judge: over glibc a wrong one (named once,
 * there), over another allocator one of that allocator's own blocks. Op:
 * ALLOCINFO_OP_DELETE, or OP_DELETE_ARRAY for delete[]. */
template <int Op>
[[gnu::noinline]] void sized_delete_debug(void *p, size_t n) noexcept
{
	if (p && has_record(p) && record_of(p)->size != n &&
	    !(n == 0 && record_of(p)->size == 0))
		log_message("operator delete%s(%p, %zu): the allocation was %llu bytes",
			    Op == OP_DELETE_ARRAY ? "[]" : "", p, n,
			    (unsigned long long)record_of(p)->size);
	do_free(p, Op);
}

/* p is not null, not a slot, and has not the plain record: what release() would find
 * too, so its next step is taken at once (over another allocator, every counted
 * block's case). */
template <int Op>
[[gnu::noinline]] void sized_delete_slow(void *p, size_t n) noexcept
{
	if (g_fast.debug)
		sized_delete_debug<Op>(p, n);
	else if (Op == OP_DELETE_ARRAY)
		release_other_delete_array(p);
	else
		release_other_delete(p);
}

/* Under ALLOCINFO_DEBUG every block has a marked record (or none), never the plain
 * magic: the size is checked only off the common case, which costs no extra test. */
template <int Op = ALLOCINFO_OP_DELETE>
inline void do_sized_delete(void *p, size_t n)
{
	uintptr_t small_base = g_fast.small_base;
	if (small::contains(p, small_base)) {	/* no record below to read */
		release_small(p, small_base);
		return;
	}
	if (!RECORD_ALWAYS && likely(p) &&
	    unlikely(page_starts::starts_page(p) || record_of(p)->meta != RECORD_MAGIC)) {
		sized_delete_slow<Op>(p, n);
		return;
	}
	if (RECORD_ALWAYS && unlikely(g_fast.debug)) {
		sized_delete_debug<Op>(p, n);
		return;
	}
	do_free(p, Op);
}
inline void do_sized_delete_array(void *p, size_t n) { do_sized_delete<OP_DELETE_ARRAY>(p, n); }

} /* namespace */

EXPORT void *operator new(size_t n) { return do_new(n, RA()); }
EXPORT void *operator new[](size_t n) { return do_new<true>(n, RA()); }
KEEPS_FRAME
EXPORT void *operator new(size_t n, const std::nothrow_t &) noexcept
{
	return do_new_nothrow(n, 0, RA());
}
KEEPS_FRAME
EXPORT void *operator new[](size_t n, const std::nothrow_t &) noexcept
{
	return do_new_nothrow<true>(n, 0, RA());
}
KEEPS_FRAME
EXPORT void *operator new(size_t n, std::align_val_t a) { return do_new_aligned(n, a, RA()); }
KEEPS_FRAME
EXPORT void *operator new[](size_t n, std::align_val_t a) { return do_new_aligned(n, a, RA()); }
KEEPS_FRAME
EXPORT void *operator new(size_t n, std::align_val_t a, const std::nothrow_t &) noexcept
{
	return do_new_nothrow(n, (size_t)a, RA());
}
KEEPS_FRAME
EXPORT void *operator new[](size_t n, std::align_val_t a, const std::nothrow_t &) noexcept
{
	return do_new_nothrow(n, (size_t)a, RA());
}

EXPORT void operator delete(void *p) noexcept { do_delete(p); }
EXPORT void operator delete[](void *p) noexcept { do_delete_array(p); }
EXPORT void operator delete(void *p, const std::nothrow_t &) noexcept { do_delete(p); }
EXPORT void operator delete[](void *p, const std::nothrow_t &) noexcept { do_delete_array(p); }
EXPORT void operator delete(void *p, size_t n) noexcept { do_sized_delete(p, n); }
EXPORT void operator delete[](void *p, size_t n) noexcept { do_sized_delete_array(p, n); }
EXPORT void operator delete(void *p, std::align_val_t) noexcept { do_delete(p); }
EXPORT void operator delete[](void *p, std::align_val_t) noexcept { do_delete_array(p); }
EXPORT void operator delete(void *p, size_t n, std::align_val_t) noexcept
{
	do_sized_delete(p, n);
}
EXPORT void operator delete[](void *p, size_t n, std::align_val_t) noexcept
{
	do_sized_delete_array(p, n);
}
EXPORT void operator delete(void *p, std::align_val_t, const std::nothrow_t &) noexcept
{
	do_delete(p);
}
EXPORT void operator delete[](void *p, std::align_val_t, const std::nothrow_t &) noexcept
{
	do_delete_array(p);
}

/* ---- routed entry points: over an allocator that came first -----------------------
 *
 * route_calls() points the process's calls of these names here rather than at the
 * exported functions above. Each takes the lean path (foreign_path.h) at once while
 * it is open, without the tests that the glibc fast path puts in front of it (its
 * switch, the plain blocks of counting off, the small-block heap's record), and does
 * what the exported function does otherwise. Frees of the allocator's counted blocks
 * likewise go straight to release_foreign().
 */

namespace {

/* Their other cases call the exported functions' bodies, never the exported names:
 * the library's own references to those are routed here too. Out of line where the
 * body would give the common case a stack frame. */
[[gnu::noinline]] void *calloc_other(size_t n, size_t m, uintptr_t ra)
{
	return do_calloc(n, m, ra);
}

[[gnu::noinline]] void *realloc_other(void *p, size_t n, uintptr_t ra)
{
	return do_realloc(p, n, [ra] { return slot_for_caller(ra); }, { nullptr, ra });
}

[[gnu::noinline]] void *site_realloc_other(const alloc_tag *t, void *p, size_t n)
{
	return do_realloc(p, n, [t] { return slot_for_site(t); }, { t, 0 });
}

template <bool Heap> void *routed_malloc(size_t n)
{
	if (likely(foreign_go()))
		return foreign_malloc<false, Heap>(n, RA());
	return do_malloc(n, RA());
}

template <bool Heap> void *routed_calloc(size_t n, size_t m)
{
	size_t total;
	if (likely(foreign_go()) && likely(!__builtin_mul_overflow(n, m, &total)))
		return foreign_malloc<true, Heap>(total, RA());
	return calloc_other(n, m, RA());
}

template <bool Heap> void *routed_site_malloc(const alloc_tag *t, size_t n)
{
	if (likely(foreign_go()))
		return foreign_site_malloc<false, Heap>(t, n);
	return do_site_malloc(t, n, false);
}

template <bool Heap> void *routed_site_calloc(const alloc_tag *t, size_t n, size_t m)
{
	size_t total;
	if (likely(foreign_go()) && likely(!__builtin_mul_overflow(n, m, &total)))
		return foreign_site_malloc<true, Heap>(t, total);
	return do_site_calloc(t, n, m);
}

template <bool Heap> void *routed_realloc(void *p, size_t n)
{
	if (likely(foreign_go()))
		return foreign_realloc<Heap>(p, n, RA());
	return realloc_other(p, n, RA());
}

template <bool Heap> void *routed_site_realloc(const alloc_tag *t, void *p, size_t n)
{
	if (likely(foreign_go()))
		return foreign_site_realloc<Heap>(t, p, n);
	return site_realloc_other(t, p, n);
}

template <bool Heap> void *routed_new(size_t n)
{
	if (likely(foreign_go()))
		return foreign_new<Heap>(n, RA());
	return do_new(n, RA());
}

template <bool Heap> void *routed_new_array(size_t n)
{
	if (likely(foreign_go()))
		return foreign_new<Heap>(n, RA());
	return do_new<true>(n, RA());
}

/* The exported functions, for the routed frees below: out of line, so that those
 * need no stack frame. */
[[gnu::noinline]] void free_other(void *p) noexcept { do_free(p); }
[[gnu::noinline]] void delete_other(void *p) noexcept { do_delete(p); }
[[gnu::noinline]] void delete_array_other(void *p) noexcept { do_delete_array(p); }
[[gnu::noinline]] void sized_delete_other(void *p, size_t n) noexcept { do_sized_delete(p, n); }
[[gnu::noinline]] void sized_delete_array_other(void *p, size_t n) noexcept
{
	do_sized_delete_array(p, n);
}

template <bool Heap> void routed_free(void *p) noexcept
{
	if (!routed_release<Heap>(p))
		free_other(p);
}

template <bool Heap> void routed_delete(void *p) noexcept
{
	if (!routed_release<Heap>(p))
		delete_other(p);
}

template <bool Heap> void routed_delete_array(void *p) noexcept
{
	if (!routed_release<Heap>(p))
		delete_array_other(p);
}

/* A block made under ALLOCINFO_DEBUG has a marked record: its size is checked by
 * do_sized_delete(). */
template <bool Heap> void routed_sized_delete(void *p, size_t n) noexcept
{
	if (!routed_release<Heap>(p))
		sized_delete_other(p, n);
}

template <bool Heap> void routed_sized_delete_array(void *p, size_t n) noexcept
{
	if (!routed_release<Heap>(p))
		sized_delete_array_other(p, n);
}

/* Each entry point, and the same without the small-block heap's tests. */
struct routed_fn {
	const char *name;
	void *fn, *without_heap;
};
#define ROUTED(name, fn) \
	{ name, reinterpret_cast<void *>(fn<true>), reinterpret_cast<void *>(fn<false>) }
const routed_fn routed_fns[] = {
	ROUTED("malloc", routed_malloc),
	ROUTED("calloc", routed_calloc),
	ROUTED("realloc", routed_realloc),
	ROUTED("free", routed_free),
	ROUTED("allocinfo_malloc", routed_site_malloc),
	ROUTED("allocinfo_calloc", routed_site_calloc),
	ROUTED("allocinfo_realloc", routed_site_realloc),
	ROUTED("_Znwm", routed_new),
	ROUTED("_Znam", routed_new_array),
	ROUTED("_ZdlPv", routed_delete),
	ROUTED("_ZdaPv", routed_delete_array),
	ROUTED("_ZdlPvm", routed_sized_delete),
	ROUTED("_ZdaPvm", routed_sized_delete_array),
};
#undef ROUTED

} /* namespace */

namespace allocinfo {

size_t block_usable_size(void *p)
{
	if (!p)
		return 0;
	if (unlikely(callbacks::wanted()))
		return callbacks::usable_size(p);
	if (RECORD_ALWAYS) {
		uint32_t s = __atomic_load_n(&g_fast.state, __ATOMIC_ACQUIRE);
		if (s == STATE_NEVER || s == STATE_UNINIT)
			return backend::usable_size(p);
	}
	return usable_size(p);
}

void free_block(void *p, int op) noexcept
{
	/* With the allocator first its counted blocks have the foreign record (which
	 * free()'s fast path never takes): as a routed free() takes them. */
	if (!RECORD_ALWAYS && backend::g_underneath == backend::underneath::first &&
	    routed_release<true>(p))
		return;
	do_free(p, op);
}

void *caller_allocate(size_t n, size_t align, bool zero, uintptr_t ra)
{
	if (!align)
		return zero ? do_calloc(1, n, ra) : do_malloc(n, ra);
	void *p = caller_memalign(align, n, ra);
	if (p && zero)	/* all it holds, as the allocators zero their blocks */
		memset(p, 0, block_usable_size(p));
	return p;
}

void *caller_resize(void *p, size_t n, uintptr_t ra)
{
	return do_realloc(p, n, [ra] { return slot_for_caller(ra); }, { nullptr, ra });
}

void *caller_new(size_t n, uintptr_t ra) { return do_new(n, ra); }

char *caller_strndup(const char *s, size_t n, uintptr_t ra)
{
	return dup_string(s, strnlen(s, n), nullptr, ra);
}

void *routed_entry(const char *name)
{
	if (RECORD_ALWAYS)	/* a sanitizer's blocks: the exported functions' checks */
		return nullptr;
	for (const routed_fn &r : routed_fns)
		if (!strcmp(r.name, name))
			return heap_variable_set() ? r.fn : r.without_heap;
	return nullptr;
}

} /* namespace allocinfo */
