/* SPDX-License-Identifier: MIT */
/*
 * The functions of ALLOCINFO_SUBALLOC_FNS and ALLOCINFO_SUBFREE_FNS in unchanged code
 * (suballoc.h): a table of what was declared, one trampoline per table entry, and the
 * GOT routing that sends the program's calls through them.
 *
 * The language's arguments (z, p, i) are all passed in integer registers on the
 * targets routing supports, so one shape of trampoline serves every description: it
 * takes six register words, hands all six to the real function (which reads the ones
 * it has) and returns the word it returns.
 */
#include "suballoc.h"

#include <errno.h>
#include <link.h>
#include <string.h>

#include <array>
#include <utility>

#include "allocators.h"
#include "route.h"

namespace allocinfo {

namespace {

using real_fn = uintptr_t (*)(uintptr_t, uintptr_t, uintptr_t, uintptr_t, uintptr_t, uintptr_t);

struct sub_fn {
	char name[256];
	char alloc_name[64];		/* the allocator: an allocating function's own name */
	unsigned sig;			/* the size, or the pointer freed */
	bool frees;
	real_fn real;			/* null: defined by no object loaded at start */
	struct allocinfo_allocator *allocator;	/* made on first use */
};

sub_fn g_subs[SUBALLOC_MAX_FNS];
unsigned g_nr_subs;

struct allocinfo_allocator *allocator_of(sub_fn &f)
{
	struct allocinfo_allocator *a = __atomic_load_n(&f.allocator, __ATOMIC_ACQUIRE);
	if (!a) {
		/* The same object for the same name, whichever thread makes it. */
		a = allocinfo_allocator_create(f.alloc_name);
		if (a)
			__atomic_store_n(&f.allocator, a, __ATOMIC_RELEASE);
	}
	return a;
}

/* Entry n's trampoline: the call's return address is its caller's line. The charge
 * keeps the pool's errno. */
template <unsigned N>
[[gnu::noinline]] uintptr_t trampoline(uintptr_t a0, uintptr_t a1, uintptr_t a2, uintptr_t a3,
				       uintptr_t a4, uintptr_t a5)
{
	uintptr_t ra = (uintptr_t)__builtin_return_address(0);
	sub_fn &f = g_subs[N];
	const uintptr_t args[SUBALLOC_MAX_ARGS] = { a0, a1, a2, a3, a4, a5 };
	if (f.frees) {
		if (args[f.sig]) {
			int saved = errno;
			if (struct allocinfo_allocator *a = allocator_of(f))
				(void)allocinfo_uncharge(a, (const void *)args[f.sig]);
			errno = saved;
		}
		return f.real(a0, a1, a2, a3, a4, a5);
	}
	uintptr_t r = f.real(a0, a1, a2, a3, a4, a5);
	if (r) {
		int saved = errno;
		if (struct allocinfo_allocator *a = allocator_of(f))
			(void)charge_from(a, (const void *)r, (size_t)args[f.sig], ra);
		errno = saved;
	}
	return r;
}

template <unsigned... N>
constexpr std::array<real_fn, sizeof...(N)> make_trampolines(std::integer_sequence<unsigned, N...>)
{
	return { { &trampoline<N>... } };
}

/* Constant-initialized: no guard, no run-time constructor. */
constexpr std::array<real_fn, SUBALLOC_MAX_FNS> g_trampolines =
	make_trampolines(std::make_integer_sequence<unsigned, SUBALLOC_MAX_FNS>());

} /* namespace */

bool suballoc_declare(const char *var, const char *name, size_t name_len, unsigned sig,
		      bool frees, const char *alloc_name, size_t alloc_len)
{
	if (g_nr_subs == SUBALLOC_MAX_FNS) {
		log_message("%s: more than %u allocating and freeing functions; '%.*s' and the "
			    "rest are ignored", var, SUBALLOC_MAX_FNS,
			    (int)(name_len > 64 ? 64 : name_len), name);
		return false;
	}
	sub_fn &f = g_subs[g_nr_subs++];
	memcpy(f.name, name, name_len);
	f.name[name_len] = '\0';
	memcpy(f.alloc_name, alloc_name, alloc_len);
	f.alloc_name[alloc_len] = '\0';
	f.sig = sig;
	f.frees = frees;
	return true;
}

void suballoc_route()
{
	if (!g_nr_subs)
		return;
	const char *names[SUBALLOC_MAX_FNS];
	void *fns[SUBALLOC_MAX_FNS];
	for (unsigned i = 0; i < g_nr_subs; i++) {
		sub_fn &f = g_subs[i];
		/* The definition the loader bound the calls to: the first in lookup order. */
		for (struct link_map *m = _r_debug.r_map; m && !f.real; m = m->l_next)
			f.real = reinterpret_cast<real_fn>(defined_symbol(m, f.name));
		names[i] = f.name;
		fns[i] = f.real ? reinterpret_cast<void *>(g_trampolines[i]) : nullptr;
	}
	(void)route_symbols(names, fns, g_nr_subs);
}

} /* namespace allocinfo */
