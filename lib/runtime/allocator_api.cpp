/* SPDX-License-Identifier: MIT */
/*
 * The allocator's own functions that take a block (allocator_api.h): a table of them,
 * one entry point per table row, and what each kind does with a block of ours.
 *
 * Every argument of these functions is an integer or a pointer, passed in registers
 * (at most six), and each returns one word or nothing: one shape of entry point, which
 * takes six register words and hands them all on, serves every row.
 */
#include "allocator_api.h"

#include <errno.h>
#include <string.h>

#include <array>
#include <utility>

#include "alloc.h"
#include "backend.h"
#include "route.h"

namespace allocinfo {

namespace {

using word = uintptr_t;
using real_fn = word (*)(word, word, word, word, word, word);

enum class kind : uint8_t {
	free_it,	/* frees the block (a delete: the C++ operator's callbacks) */
	delete_it,
	size_of,	/* returns its usable size */
	resize,		/* returns a block of the new size, or null (the old one kept) */
	resize_or_free,	/* the same, but frees the old block when it fails (reallocf) */
	resize_at,	/* the argument holds the address of the block's pointer, which it
			 * updates; returns 0 or an errno value (NetBSD's reallocarr) */
	grow_in_place_size,	/* resizes in place, returns the usable size (xallocx) */
	grow_in_place,		/* resizes in place, returns the block or null (mi_expand) */
};

struct api_fn {
	const char *name;
	kind what;
	uint8_t arg;	/* which argument is the block (or its pointer's address) */
	bool zero_frees = false;	/* a resize to 0 bytes (the argument after the
					 * block) frees it and returns null */
};

constexpr api_fn g_table[] = {
	/* jemalloc */
	{ "dallocx", kind::free_it, 0 },
	{ "sdallocx", kind::free_it, 0 },
	{ "sallocx", kind::size_of, 0 },
	{ "rallocx", kind::resize, 0 },
	{ "xallocx", kind::grow_in_place_size, 0 },
	/* tcmalloc (gperftools) */
	{ "tc_free", kind::free_it, 0 },
	{ "tc_cfree", kind::free_it, 0 },
	{ "tc_free_sized", kind::free_it, 0 },
	{ "tc_delete", kind::delete_it, 0 },
	{ "tc_deletearray", kind::delete_it, 0 },
	{ "tc_delete_nothrow", kind::delete_it, 0 },
	{ "tc_deletearray_nothrow", kind::delete_it, 0 },
	{ "tc_delete_sized", kind::delete_it, 0 },
	{ "tc_deletearray_sized", kind::delete_it, 0 },
	{ "tc_delete_aligned", kind::delete_it, 0 },
	{ "tc_deletearray_aligned", kind::delete_it, 0 },
	{ "tc_delete_aligned_nothrow", kind::delete_it, 0 },
	{ "tc_deletearray_aligned_nothrow", kind::delete_it, 0 },
	{ "tc_delete_sized_aligned", kind::delete_it, 0 },
	{ "tc_deletearray_sized_aligned", kind::delete_it, 0 },
	{ "tc_realloc", kind::resize, 0, true },
	{ "tc_malloc_size", kind::size_of, 0 },
	{ "MallocExtension_GetAllocatedSize", kind::size_of, 0 },
	/* tcmalloc and mimalloc */
	{ "cfree", kind::free_it, 0 },
	{ "malloc_size", kind::size_of, 0 },
	/* mimalloc */
	{ "mi_free", kind::free_it, 0 },
	{ "mi_cfree", kind::free_it, 0 },
	{ "mi_free_size", kind::free_it, 0 },
	{ "mi_free_aligned", kind::free_it, 0 },
	{ "mi_free_size_aligned", kind::free_it, 0 },
	{ "vfree", kind::free_it, 0 },
	{ "mi_usable_size", kind::size_of, 0 },
	{ "mi_malloc_size", kind::size_of, 0 },
	{ "mi_malloc_usable_size", kind::size_of, 0 },
	{ "mi_realloc", kind::resize, 0 },
	{ "mi_reallocn", kind::resize, 0 },
	{ "mi_rezalloc", kind::resize, 0 },
	{ "mi_recalloc", kind::resize, 0 },
	{ "mi_reallocarray", kind::resize, 0 },
	{ "mi_realloc_aligned", kind::resize, 0 },
	{ "mi_realloc_aligned_at", kind::resize, 0 },
	{ "mi_rezalloc_aligned", kind::resize, 0 },
	{ "mi_rezalloc_aligned_at", kind::resize, 0 },
	{ "mi_recalloc_aligned", kind::resize, 0 },
	{ "mi_recalloc_aligned_at", kind::resize, 0 },
	{ "mi_new_realloc", kind::resize, 0 },
	{ "mi_new_reallocn", kind::resize, 0 },
	{ "mi_aligned_recalloc", kind::resize, 0 },
	{ "mi_aligned_offset_recalloc", kind::resize, 0 },
	{ "mi_heap_realloc", kind::resize, 1 },
	{ "mi_heap_reallocn", kind::resize, 1 },
	{ "mi_heap_rezalloc", kind::resize, 1 },
	{ "mi_heap_recalloc", kind::resize, 1 },
	{ "mi_heap_realloc_aligned", kind::resize, 1 },
	{ "mi_heap_realloc_aligned_at", kind::resize, 1 },
	{ "mi_heap_rezalloc_aligned", kind::resize, 1 },
	{ "mi_heap_rezalloc_aligned_at", kind::resize, 1 },
	{ "mi_heap_recalloc_aligned", kind::resize, 1 },
	{ "mi_heap_recalloc_aligned_at", kind::resize, 1 },
	{ "mi_reallocf", kind::resize_or_free, 0 },
	{ "reallocf", kind::resize_or_free, 0 },
	{ "mi_heap_reallocf", kind::resize_or_free, 1 },
	{ "mi_reallocarr", kind::resize_at, 0 },
	{ "reallocarr", kind::resize_at, 0 },
	{ "mi_expand", kind::grow_in_place, 0 },
	{ "mi__expand", kind::grow_in_place, 0 },
};
constexpr unsigned NR_API = sizeof(g_table) / sizeof(g_table[0]);
static_assert(NR_API <= ALLOCATOR_API_MAX, "ALLOCATOR_API_MAX holds the table");

/* Each row's function in the allocator; set before any call is routed here. */
real_fn g_real[NR_API];

/*
 * The bytes of a block of ours (all it can hold, which a zeroing resize counts on), in
 * a block of the allocator's own made by its malloc, with what that block holds beyond
 * them zeroed. Null, errno ENOMEM, when the allocator has no memory for it.
 */
void *copy_to_allocator_block(void *p)
{
	size_t n = block_usable_size(p);
	void *q = backend::foreign.malloc(n ? n : 1);
	if (!q) {
		errno = ENOMEM;
		return nullptr;
	}
	memcpy(q, p, n);
	size_t room = backend::foreign.usable_size(q);
	if (room > n)
		memset(static_cast<char *>(q) + n, 0, room - n);
	return q;
}

/*
 * Row N's resize of a block of ours: the allocator's function resizes a copy of it
 * in a block of its own, with all its own arguments, and ours is freed once that
 * succeeded. When it fails, the program still has its block as it was (and, for
 * reallocf, has it freed, as the function frees what it was given).
 */
template <unsigned N> word resize_ours(void *p, word *args)
{
	constexpr api_fn f = g_table[N];
	if (f.zero_frees && args[f.arg + 1] == 0) {
		free_block(p, ALLOCINFO_OP_FREE);
		return 0;
	}
	int saved = errno;
	void *q = copy_to_allocator_block(p);
	if (!q) {
		if (f.what == kind::resize_or_free)
			free_block(p, ALLOCINFO_OP_FREE);
		return f.what == kind::resize_at ? ENOMEM : 0;
	}
	errno = saved;
	auto *at = reinterpret_cast<void **>(args[f.arg]);	/* resize_at */
	if (f.what == kind::resize_at)
		*at = q;
	else
		args[f.arg] = (word)q;
	word r = g_real[N](args[0], args[1], args[2], args[3], args[4], args[5]);
	bool failed = f.what == kind::resize_at ? r != 0 : r == 0;
	if (!failed) {
		free_block(p, ALLOCINFO_OP_FREE);
		return r;
	}
	int error = errno;
	if (f.what == kind::resize_or_free) {
		free_block(p, ALLOCINFO_OP_FREE);	/* the function freed the copy */
	} else {
		if (f.what == kind::resize_at)
			*at = p;
		backend::foreign.free(q);
	}
	errno = error;
	return r;
}

/* Row N's call with a block of ours (p, at args[arg]; for resize_at, *args[arg]). */
template <unsigned N> [[gnu::noinline]] word ours(void *p, word *args)
{
	constexpr api_fn f = g_table[N];
	switch (f.what) {
	case kind::free_it:
		free_block(p, ALLOCINFO_OP_FREE);
		return 0;
	case kind::delete_it:
		free_block(p, ALLOCINFO_OP_DELETE);
		return 0;
	case kind::size_of:
	case kind::grow_in_place_size:	/* not grown: the size it has */
		return block_usable_size(p);
	case kind::grow_in_place:	/* mi_expand(p, n): p when n fits already */
		return args[f.arg + 1] <= block_usable_size(p) ? (word)p : 0;
	case kind::resize:
	case kind::resize_or_free:
	case kind::resize_at:
		return resize_ours<N>(p, args);
	}
	return 0;
}

/* Row N's entry point: the allocator's function itself, unless the block is ours. */
template <unsigned N>
word entry(word a0, word a1, word a2, word a3, word a4, word a5)
{
	constexpr api_fn f = g_table[N];
	word at = f.arg == 0 ? a0 : a1;
	void *p = reinterpret_cast<void *>(at);
	if (f.what == kind::resize_at)
		p = at ? *reinterpret_cast<void **>(at) : nullptr;
	if (likely(!block_is_ours(p)))
		return g_real[N](a0, a1, a2, a3, a4, a5);
	word args[6] = { a0, a1, a2, a3, a4, a5 };
	return ours<N>(p, args);
}

template <unsigned... N>
constexpr std::array<real_fn, sizeof...(N)> make_entries(std::integer_sequence<unsigned, N...>)
{
	return { { &entry<N>... } };
}

/* Constant-initialized: no guard, no run-time constructor. */
constexpr std::array<real_fn, NR_API> g_entries =
	make_entries(std::make_integer_sequence<unsigned, NR_API>());

/* The first object in lookup order that defines `name`. */
struct link_map *first_definer(const char *name)
{
	for (struct link_map *m = _r_debug.r_map; m; m = m->l_next)
		if (defined_symbol(m, name))
			return m;
	return nullptr;
}

} /* namespace */

unsigned allocator_api_entries(struct link_map *allocator, const char **names, void **fns,
			       unsigned max)
{
	unsigned n = 0;
	for (unsigned i = 0; i < NR_API && n < max; i++) {
		void *real = defined_symbol(allocator, g_table[i].name);
		/* A name another object defines first (a program's own reallocarr) is
		 * not the allocator's to the program: left alone. */
		if (!real || first_definer(g_table[i].name) != allocator)
			continue;
		g_real[i] = reinterpret_cast<real_fn>(real);
		names[n] = g_table[i].name;
		fns[n] = reinterpret_cast<void *>(g_entries[i]);
		n++;
		/* What is looked up from now on (objects loaded later, dlsym) finds the
		 * entry point too; the entries already bound are routed by the caller. */
		redirect_symbol(allocator, g_table[i].name, fns[n - 1]);
	}
	return n;
}

} /* namespace allocinfo */
