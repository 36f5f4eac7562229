/* SPDX-License-Identifier: MIT */
/*
 * The allocator's own functions (allocator_api.h): a table of them, one entry point per
 * table row, and what each kind does: with a block of ours, when it takes one; in the
 * library's name, when it makes one or predicts one's size.
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
#include "callbacks.h"
#include "foreign_path.h"
#include "route.h"

namespace allocinfo {

namespace {

using word = uintptr_t;
using real_fn = word (*)(word, word, word, word, word, word);

enum class kind : uint8_t {
	/* take a block */
	free_it,	/* frees the block (a delete: the C++ operator's callbacks) */
	delete_it,
	size_of,	/* returns its usable size */
	resize,		/* returns a block of the new size, or null (the old one kept) */
	resize_or_free,	/* the same, but frees the old block when it fails (reallocf) */
	resize_at,	/* the argument holds the address of the block's pointer, which it
			 * updates; returns 0 or an errno value (NetBSD's reallocarr) */
	grow_in_place_size,	/* resizes in place, returns the usable size (xallocx) */
	grow_in_place,		/* resizes in place, returns the block or null (mi_expand) */
	/* make one: counted for the caller, as malloc's blocks are */
	allocate,	/* malloc, calloc or an aligned form, by the fields below */
	new_n,		/* operator new of count times size bytes (mimalloc's mi_new_n) */
	duplicate,	/* a copy of a string, or of at most its next argument's bytes */
	mallocx,	/* jemalloc's: a size and flags */
	/* neither: what an allocation of a size would give */
	usable_for,	/* the usable size of a block of that size (nallocx, mi_good_size) */
};

constexpr bool takes_block(kind k) { return k < kind::allocate; }

/* When a resize is counted: then the new block is the library's, made for the
 * caller by realloc(), whoever made the old one. Otherwise (a zeroing or aligned
 * form, an arena, a heap) a block of ours is resized by the allocator as a copy in a
 * block of its own, and the result is the allocator's, uncounted. */
enum class counted : uint8_t {
	never,
	sized,		/* when the size, the argument after the block's, is not 0 */
	array,		/* when count and size, the two arguments after it, make a product
			 * that is neither 0 nor too large */
	jemalloc_flags,	/* rallocx: when the flags ask only for an alignment realloc()
			 * gives anyway */
};

constexpr int8_t NONE = -1;

struct api_fn {
	const char *name;
	kind what;
	int8_t arg;	/* which argument is the block (or its pointer's address); for
			 * allocate and new_n the size, for duplicate the string */
	counted when = counted::never;
	/* allocate and new_n */
	int8_t count = NONE;	/* the argument that multiplies the size */
	int8_t align = NONE;	/* the argument that holds the alignment */
	bool zero = false;
	bool bounded = false;	/* duplicate: at most the next argument's bytes */
	int8_t flags = NONE;	/* usable_for: jemalloc's flags (nallocx) */
};

constexpr api_fn with_count(api_fn f, int8_t count) { return f.count = count, f; }
constexpr api_fn with_align(api_fn f, int8_t align) { return f.align = align, f; }
constexpr api_fn zeroed(api_fn f) { return f.zero = true, f; }
constexpr api_fn bounded(api_fn f) { return f.bounded = true, f; }
constexpr api_fn with_flags(api_fn f, int8_t flags) { return f.flags = flags, f; }

constexpr api_fn g_table[] = {
	/* jemalloc */
	{ "dallocx", kind::free_it, 0 },
	{ "sdallocx", kind::free_it, 0 },
	{ "sallocx", kind::size_of, 0 },
	{ "rallocx", kind::resize, 0, counted::jemalloc_flags },
	{ "xallocx", kind::grow_in_place_size, 0 },
	{ "mallocx", kind::mallocx, 0 },
	/* jemalloc and tcmalloc */
	with_flags({ "nallocx", kind::usable_for, 0 }, 1),
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
	{ "tc_malloc_size", kind::size_of, 0 },
	with_flags({ "tc_nallocx", kind::usable_for, 0 }, 1),
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
	{ "mi_realloc", kind::resize, 0, counted::sized },
	{ "mi_reallocn", kind::resize, 0, counted::array },
	{ "mi_rezalloc", kind::resize, 0 },
	{ "mi_recalloc", kind::resize, 0 },
	{ "mi_reallocarray", kind::resize, 0, counted::array },
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
	{ "mi_reallocf", kind::resize_or_free, 0, counted::sized },
	{ "reallocf", kind::resize_or_free, 0, counted::sized },
	{ "mi_heap_reallocf", kind::resize_or_free, 1 },
	{ "mi_reallocarr", kind::resize_at, 0, counted::array },
	{ "reallocarr", kind::resize_at, 0, counted::array },
	{ "mi_expand", kind::grow_in_place, 0 },
	{ "mi__expand", kind::grow_in_place, 0 },
	zeroed({ "mi_zalloc", kind::allocate, 0 }),
	zeroed({ "mi_zalloc_small", kind::allocate, 0 }),
	with_count({ "mi_mallocn", kind::allocate, 1 }, 0),
	with_align({ "mi_malloc_aligned", kind::allocate, 0 }, 1),
	zeroed(with_align({ "mi_zalloc_aligned", kind::allocate, 0 }, 1)),
	zeroed(with_align(with_count({ "mi_calloc_aligned", kind::allocate, 1 }, 0), 2)),
	with_count({ "mi_new_n", kind::new_n, 1 }, 0),
	{ "mi_strdup", kind::duplicate, 0 },
	bounded({ "mi_strndup", kind::duplicate, 0 }),
	{ "mi_good_size", kind::usable_for, 0 },
	{ "mi_malloc_good_size", kind::usable_for, 0 },
	{ "malloc_good_size", kind::usable_for, 0 },
};
constexpr unsigned NR_API = sizeof(g_table) / sizeof(g_table[0]);

/* The allocator's functions that are malloc's, or new's, under another name: their
 * calls reach the library's entry point of that name. */
struct same_as {
	const char *name, *as;
};
constexpr same_as g_same[] = {
	/* tcmalloc */
	{ "tc_malloc", "malloc" },
	{ "tc_malloc_skip_new_handler", "malloc" },
	{ "tc_calloc", "calloc" },
	{ "tc_realloc", "realloc" },
	{ "tc_memalign", "memalign" },
	{ "tc_posix_memalign", "posix_memalign" },
	{ "tc_valloc", "valloc" },
	{ "tc_pvalloc", "pvalloc" },
	{ "tc_new", "_Znwm" },
	{ "tc_newarray", "_Znam" },
	{ "tc_new_nothrow", "_ZnwmRKSt9nothrow_t" },
	{ "tc_newarray_nothrow", "_ZnamRKSt9nothrow_t" },
	{ "tc_new_aligned", "_ZnwmSt11align_val_t" },
	{ "tc_newarray_aligned", "_ZnamSt11align_val_t" },
	{ "tc_new_aligned_nothrow", "_ZnwmSt11align_val_tRKSt9nothrow_t" },
	{ "tc_newarray_aligned_nothrow", "_ZnamSt11align_val_tRKSt9nothrow_t" },
	/* mimalloc: its nothrow and aligned new take no std::nothrow_t, which the
	 * library's operators never read */
	{ "mi_malloc", "malloc" },
	{ "mi_malloc_small", "malloc" },
	{ "mi_calloc", "calloc" },
	{ "mi_memalign", "memalign" },
	{ "mi_aligned_alloc", "aligned_alloc" },
	{ "mi_posix_memalign", "posix_memalign" },
	{ "mi_valloc", "valloc" },
	{ "mi_pvalloc", "pvalloc" },
	{ "mi_new", "_Znwm" },
	{ "mi_new_nothrow", "_ZnwmRKSt9nothrow_t" },
	{ "mi_new_aligned", "_ZnwmSt11align_val_t" },
	{ "mi_new_aligned_nothrow", "_ZnwmSt11align_val_tRKSt9nothrow_t" },
};
constexpr unsigned NR_SAME = sizeof(g_same) / sizeof(g_same[0]);
static_assert(NR_API + NR_SAME <= ALLOCATOR_API_MAX, "ALLOCATOR_API_MAX holds the tables");

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
 * Row N's resize of a block of ours, not counted: the allocator's function resizes a
 * copy of it in a block of its own, with all its own arguments, and ours is freed
 * once that succeeded. When it fails, the program still has its block as it was
 * (and, for reallocf, has it freed, as the function frees what it was given).
 */
template <unsigned N> word resize_ours(void *p, word *args)
{
	constexpr api_fn f = g_table[N];
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

/* Row N's call with a block of ours (p, at args[arg]; for resize_at, *args[arg]), for
 * the rows that do more than free it or give its size (entry()). */
template <unsigned N> [[gnu::noinline]] word ours(void *p, word *args)
{
	constexpr api_fn f = g_table[N];
	switch (f.what) {
	case kind::grow_in_place_size:	/* not grown: the size it has */
		return block_usable_size(p);
	case kind::grow_in_place:	/* mi_expand(p, n): p when n fits already */
		return args[f.arg + 1] <= block_usable_size(p) ? (word)p : 0;
	case kind::resize:
	case kind::resize_or_free:
	case kind::resize_at:
		return resize_ours<N>(p, args);
	default:
		return 0;
	}
}

/* jemalloc's flags: the low six bits hold log2 of the alignment, the seventh asks for
 * zeroed memory; the rest choose a thread cache or an arena, which only jemalloc can
 * honour. */
constexpr uint32_t JE_LG_ALIGN = 0x3f, JE_ZERO = 0x40;
/* The alignment every block of the library's has (alloc.h). */
constexpr uint32_t LG_RECORD_ALIGN = 4;

/* The new size of row N's call when its resize is counted (`when`), else 0. */
template <unsigned N> size_t counted_size(const word *args)
{
	constexpr api_fn f = g_table[N];
	size_t n = 0;
	switch (f.when) {
	case counted::never:
		break;
	case counted::sized:
		n = args[f.arg + 1];
		break;
	case counted::array:
		if (__builtin_mul_overflow(args[f.arg + 1], args[f.arg + 2], &n))
			n = 0;	/* the allocator's own answer to it */
		break;
	case counted::jemalloc_flags: {
		uint32_t flags = (uint32_t)args[f.arg + 2];	/* an int */
		if (!(flags & ~JE_LG_ALIGN) && (flags & JE_LG_ALIGN) <= LG_RECORD_ALIGN)
			n = args[f.arg + 1];
		break;
	}
	}
	return n;
}

/* Row N's counted resize of any block, or of none: realloc()'s, for the caller at ra. */
template <unsigned N> [[gnu::noinline]] word resize_counted(word *args, size_t n, uintptr_t ra)
{
	constexpr api_fn f = g_table[N];
	if (f.what == kind::resize_at) {
		auto *at = reinterpret_cast<void **>(args[f.arg]);
		void *q = caller_resize(*at, n, ra);
		if (!q)
			return ENOMEM;	/* *at is left as it was */
		*at = q;
		return 0;
	}
	void *p = reinterpret_cast<void *>(args[f.arg]);
	void *q = caller_resize(p, n, ra);
	if (!q && p && f.what == kind::resize_or_free)
		free_block(p, ALLOCINFO_OP_FREE);
	return (word)q;
}

/* The smallest block allocate_aligned() asks for, before the alignment (alloc.cpp). */
constexpr size_t MIN_ALIGNED_RESERVE = 24;

/* Row N's answer, usable_for: the usable size the library's block of n bytes gets,
 * found by asking the allocator about the block the library would ask it for; 0 for a
 * size past what can be had; the allocator's own answer for an arena or a thread
 * cache, whose blocks it makes itself. */
template <unsigned N> word usable_for(word *args, size_t n)
{
	constexpr api_fn f = g_table[N];
	uint32_t flags = f.flags != NONE ? (uint32_t)args[f.flags] : 0;
	if (flags & ~JE_LG_ALIGN)	/* an arena or a thread cache: the allocator's */
		return g_real[N](args[0], args[1], args[2], args[3], args[4], args[5]);
	uint32_t lg = flags & JE_LG_ALIGN;
	size_t below = sizeof(alloc_record), ask;
	if (lg > LG_RECORD_ALIGN) {	/* the size and the alignment, aligned */
		below = (size_t)1 << lg;
		if (__builtin_add_overflow(n < MIN_ALIGNED_RESERVE ? MIN_ALIGNED_RESERVE : n, below,
					   &ask))
			return 0;
	} else if (n < g_fast.small_end &&
		   (!lg || backend::g_underneath != backend::underneath::first)) {
		/* ALLOCINFO_HEAP=own: a slot, for malloc; for an alignment of 16 or
		 * less too when the library comes first (its aligned path then takes the
		 * fast path's, where the heap serves) */
		return small::usable(small::class_of(n));
	} else {	/* 0 bytes get one (allocate_foreign_inline()) */
		if (__builtin_add_overflow(n + (n == 0), below, &ask))
			return 0;
		if (f.flags != NONE)
			args[f.flags] = 0;
	}
	args[f.arg] = ask;
	word r = g_real[N](args[0], args[1], args[2], args[3], args[4], args[5]);
	return r >= below ? r - below : 0;
}

/* Row N's allocation, counted for the caller at ra. An argument the library does not
 * serve as the allocator would (an alignment that is not a power of two, a product
 * that overflows, jemalloc's arenas) gets the allocator's own answer, uncounted.
 * usable_for rows answer for such an allocation. */
template <unsigned N> [[gnu::noinline]] word make(word *args, uintptr_t ra)
{
	constexpr api_fn f = g_table[N];
	size_t n = args[f.arg], align = 0;
	bool zero = f.zero;
	switch (f.what) {
	case kind::usable_for:
		return usable_for<N>(args, n);
	case kind::mallocx: {
		uint32_t flags = (uint32_t)args[1];
		if (flags & ~(JE_LG_ALIGN | JE_ZERO))
			break;
		/* Any alignment asked for takes memalign()'s path, as usable_for()
		 * answers: no slot of the small-block heap. */
		uint32_t lg = flags & JE_LG_ALIGN;
		return (word)caller_allocate(n, lg ? (size_t)1 << lg : 0, flags & JE_ZERO, ra);
	}
	case kind::duplicate:
		if (!n)
			break;
		return (word)caller_strndup(reinterpret_cast<const char *>(n),
					    f.bounded ? args[f.arg + 1] : SIZE_MAX, ra);
	default:
		if (f.count != NONE && __builtin_mul_overflow(args[f.count], n, &n))
			break;
		if (f.align != NONE) {
			align = args[f.align];
			if (!align || (align & (align - 1)))
				break;
		}
		if (f.what == kind::new_n)
			return (word)caller_new(n, ra);
		return (word)caller_allocate(n, align, zero, ra);
	}
	return g_real[N](args[0], args[1], args[2], args[3], args[4], args[5]);
}

#define RA() ((uintptr_t)__builtin_return_address(0))

/* Row N's plain allocations (no alignment, no arena) go straight to what they are:
 * with the allocator first, the lean path of the routed malloc() and calloc()
 * (foreign_path.h); with the library first, the exported functions' bodies
 * (caller_allocate()). make() would reach the same after reading the whole row. */
constexpr bool lean_row(const api_fn &f)
{
	return f.what == kind::mallocx || (f.what == kind::allocate && f.align == NONE);
}

/* The size and zeroing of row N's call, when it asks for nothing more. */
template <unsigned N> inline bool lean_arguments(word a0, word a1, size_t *n, bool *zero)
{
	constexpr api_fn f = g_table[N];
	*n = f.arg == 0 ? a0 : a1;
	*zero = f.zero;
	if (f.what == kind::mallocx) {
		uint32_t flags = (uint32_t)a1;	/* an int */
		*zero = flags & JE_ZERO;
		return !(flags & ~JE_ZERO);
	}
	return f.count == NONE || !__builtin_mul_overflow(f.count == 0 ? a0 : a1, *n, n);
}

/* Row N's entry point. A function that makes a block: the library's allocation. One
 * that takes a block: the allocator's function itself, unless the block is ours or
 * the resize is counted. */
template <unsigned N>
word entry(word a0, word a1, word a2, word a3, word a4, word a5)
{
	constexpr api_fn f = g_table[N];
	if constexpr (!takes_block(f.what)) {
		if constexpr (lean_row(f)) {
			size_t n;
			bool zero;
			if (lean_arguments<N>(a0, a1, &n, &zero)) {
				if (foreign_go())
					return (word)(zero ? foreign_malloc<true>(n, RA())
							   : foreign_malloc<false>(n, RA()));
				return (word)caller_allocate(n, 0, zero, RA());
			}
		}
		word args[6] = { a0, a1, a2, a3, a4, a5 };
		return make<N>(args, RA());
	} else {
		if constexpr (f.when != counted::never) {
			word args[6] = { a0, a1, a2, a3, a4, a5 };
			if (size_t n = counted_size<N>(args)) {
				/* With the allocator first: the routed realloc()'s lean path. */
				if (f.what == kind::resize && foreign_go())
					return (word)foreign_realloc(
						reinterpret_cast<void *>(args[f.arg]), n, RA());
				return resize_counted<N>(args, n, RA());
			}
		}
		word at = f.arg == 0 ? a0 : a1;
		void *p = reinterpret_cast<void *>(at);
		if (f.what == kind::resize_at)
			p = at ? *reinterpret_cast<void **>(at) : nullptr;
		/* A plain counted block: with the allocator first, freed as its routed
		 * free() frees it; its size, the allocator's own answer for the block
		 * under the record, less the record (usable_size()'s, with fewer steps). */
		if constexpr (f.what == kind::free_it || f.what == kind::delete_it) {
			if (!RECORD_ALWAYS && backend::g_underneath == backend::underneath::first &&
			    routed_release<true>(p))
				return 0;
		}
		if constexpr (f.what == kind::size_of) {
			alloc_record *rec;
			if (!RECORD_ALWAYS && !callbacks::wanted() &&
			    (rec = plain_foreign_record<true, true>(p))) {
				word args[6] = { a0, a1, a2, a3, a4, a5 };
				args[f.arg] = (word)rec;
				size_t n = g_real[N](args[0], args[1], args[2], args[3], args[4], args[5]);
				return n >= sizeof(*rec) + rec->size ? n - sizeof(*rec) : rec->size;
			}
		}
		if (likely(!block_is_ours(p)))
			return g_real[N](a0, a1, a2, a3, a4, a5);
		if constexpr (f.what == kind::free_it || f.what == kind::delete_it) {
			free_block(p, f.what == kind::free_it ? ALLOCINFO_OP_FREE : ALLOCINFO_OP_DELETE);
			return 0;
		} else if constexpr (f.what == kind::size_of) {
			return block_usable_size(p);
		} else {
			word args[6] = { a0, a1, a2, a3, a4, a5 };
			return ours<N>(p, args);
		}
	}
}

template <unsigned... N>
constexpr std::array<real_fn, sizeof...(N)> make_entries(std::integer_sequence<unsigned, N...>)
{
	return { { &entry<N>... } };
}

/* Constant-initialized: no guard, no run-time constructor. */
constexpr std::array<real_fn, NR_API> g_entries =
	make_entries(std::make_integer_sequence<unsigned, NR_API>());

/*
 * tcmalloc's C++ interface, MallocExtension::instance()->GetAllocatedSize(p): a
 * virtual call, which no symbol names, so each implementation's vtable entry is
 * pointed at an entry point of ours. tcmalloc calls it itself too: its
 * tc_malloc_size() and malloc_usable_size() are that call, made as a tail call, and
 * the library asks them the size of the allocator's block under each of its own. A
 * call from the allocator's code or from the library's therefore stays the
 * allocator's: asked whether the block is the library's, the allocator's block under
 * one of ours would be judged by the bytes below it, the end of the block below,
 * which the program writes. Only other objects' calls are asked.
 */
struct virtual_size {
	const char *vtable, *method;
};
constexpr virtual_size g_virtual_sizes[] = {
	{ "_ZTV22TCMallocImplementation", "_ZN22TCMallocImplementation16GetAllocatedSizeEPKv" },
	{ "_ZTV25DebugMallocImplementation",
	  "_ZN25DebugMallocImplementation16GetAllocatedSizeEPKv" },
};
constexpr unsigned NR_VIRTUAL_SIZES = sizeof(g_virtual_sizes) / sizeof(g_virtual_sizes[0]);

using virtual_size_fn = size_t (*)(const void *self, const void *p);
virtual_size_fn g_real_virtual_size[NR_VIRTUAL_SIZES];
struct code {
	uintptr_t lo, hi;	/* [lo, hi) */
	bool holds(uintptr_t a) const { return a - lo < hi - lo; }
};
code g_allocator_code, g_library_code;

template <unsigned I> size_t allocated_size(const void *self, const void *p)
{
	uintptr_t ra = (uintptr_t)__builtin_return_address(0);
	void *block = const_cast<void *>(p);
	if (g_allocator_code.holds(ra) || g_library_code.holds(ra) || !block_is_ours(block))
		return g_real_virtual_size[I](self, p);
	return block_usable_size(block);
}

constexpr virtual_size_fn g_virtual_size_entries[] = { &allocated_size<0>, &allocated_size<1> };
static_assert(sizeof(g_virtual_size_entries) / sizeof(g_virtual_size_entries[0]) ==
		      NR_VIRTUAL_SIZES,
	      "an entry point for each vtable");

/* The first object in lookup order that defines `name`. */
struct link_map *first_definer(const char *name)
{
	for (struct link_map *m = _r_debug.r_map; m; m = m->l_next)
		if (defined_symbol(m, name))
			return m;
	return nullptr;
}

} /* namespace */

unsigned allocator_api_entries(struct link_map *allocator, struct link_map *self,
			       const char **names, void **fns, unsigned max)
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
		 * entry point too; the entries already bound are routed by the caller.
		 * Only for the functions that take a block: the allocator's lazily
		 * bound calls to itself would find it as well, and one that allocates
		 * must give the allocator its own block (tcmalloc's posix_memalign
		 * calls its tc_memalign). A block the allocator makes uncounted is
		 * still right; one of ours that reaches it is not. */
		if (takes_block(g_table[i].what))
			redirect_symbol(allocator, g_table[i].name, fns[n - 1]);
	}
	if (code_range(allocator->l_addr, &g_allocator_code.lo, &g_allocator_code.hi) &&
	    code_range(self->l_addr, &g_library_code.lo, &g_library_code.hi))
		for (unsigned i = 0; i < NR_VIRTUAL_SIZES; i++) {
			const virtual_size &v = g_virtual_sizes[i];
			g_real_virtual_size[i] = reinterpret_cast<virtual_size_fn>(
				defined_symbol(allocator, v.method));
			if (g_real_virtual_size[i])
				redirect_virtual(allocator, v.vtable, v.method,
						 reinterpret_cast<void *>(g_virtual_size_entries[i]));
		}
	for (unsigned i = 0; i < NR_SAME && n < max; i++) {
		if (!defined_symbol(allocator, g_same[i].name) ||
		    first_definer(g_same[i].name) != allocator)
			continue;
		void *fn = routed_entry(g_same[i].as);
		if (!fn && !(fn = defined_symbol(self, g_same[i].as)))
			continue;
		names[n] = g_same[i].name;
		fns[n++] = fn;
	}
	return n;
}

} /* namespace allocinfo */
